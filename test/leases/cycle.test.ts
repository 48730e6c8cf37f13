import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { Principal } from '../harness.ts';
import { type Claim, type Cluster, createTask, getTask, INSTANCES, type LeaseBody, startInstances, WORKER_SCOPES } from './instances.ts';

interface Cycled {
  ended: { task: Claim['task'] & { handoff?: { summary: string } }; lease: LeaseBody };
  claims: Claim[];
  retry_after_s: number | null;
}
interface CycledMany extends Omit<Cycled, 'ended'> {
  ended: Cycled['ended'][];
}

let cluster: Cluster;
let agent: Principal;
let other: Principal;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { sweepIntervalMs: 0 });
  agent = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  other = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
});
afterAll(() => cluster.close());

let labels = 0;
/** A label of its own, with `count` todo tasks under it (priorities as given, else normal). */
async function queue(count: number, priorities: string[] = []): Promise<{ label: string; ids: string[] }> {
  const label = `cycle-${labels++}`;
  const ids = [];
  for (let i = 0; i < count; i++) ids.push((await createTask(cluster, { labels: [label], priority: priorities[i] ?? 'normal' })).id);
  return { label, ids };
}

async function claim(who: Principal, label: string, limit = 1): Promise<Claim[]> {
  const res = await cluster.request('POST', '/api/v1/tasks/claim', { token: who.token, body: { labels: [label], limit } });
  expect(res.status, res.body).toBe(200);
  return res.json<{ claims: Claim[] }>().claims;
}

const cycle = (token: string, leaseId: string, body: Record<string, unknown>, options: { key?: string; via?: number } = {}) =>
  cluster.request('POST', `/api/v1/leases/${leaseId}/cycle`, { token, body, ...options });
const cycleMany = (token: string, body: Record<string, unknown>, via = 0) => cluster.request('POST', '/api/v1/leases/cycle', { token, body, via });

interface StoredEvent {
  type: string;
  subject: string;
  actor_id: string;
  data: Record<string, unknown>;
}
/**
 * The events about `subjects` in append order, read from the store: the API's event lists stay
 * below the oldest transaction still open anywhere on the server (src/store/events.ts), which on
 * a shared PostgreSQL can hold back what a test has just written.
 */
async function eventsAbout(subjects: readonly string[], type?: string): Promise<StoredEvent[]> {
  const { rows } = await sql<StoredEvent>`SELECT type, subject, actor_id, data FROM events WHERE subject = ANY (${[...subjects]}::text[]) ORDER BY seq`.execute(cluster.database.db);
  return rows.filter((e) => type === undefined || e.type === type);
}
const types = (events: readonly StoredEvent[]) => events.map((e) => e.type);

describe('POST /api/v1/leases/{id}/cycle', () => {
  it('hands the task in and claims the next matching one in one call, with the events of both', async () => {
    const { label, ids } = await queue(3, ['normal', 'urgent', 'low']);
    const [first] = await claim(agent, label);
    expect(first?.task.id).toBe(ids[1]);
    const res = await cycle(agent.token, first?.lease.id ?? '', { summary: 'Fixed and tested.', labels: [label] });
    expect(res.status, res.body).toBe(200);
    const body = res.json<Cycled>();
    expect(body.ended.task).toEqual({ id: ids[1], title: expect.any(String) as string, status: 'in_review', version: expect.any(Number) as number, attempts: 0, not_before: null, blocked_reason: null });
    expect(body.ended.lease).toMatchObject({ id: first?.lease.id, state: 'ended', ended_at: expect.any(String) as string });
    expect(body.retry_after_s).toBeNull();
    expect(body.claims).toHaveLength(1);
    expect(body.claims[0]?.task).toMatchObject({ id: ids[0], status: 'in_progress' });
    expect(body.claims[0]?.lease).toMatchObject({ task_id: ids[0], holder: { id: agent.id, kind: 'agent' }, state: 'active', epoch: 1 });

    const handed = await cluster.request('GET', `/api/v1/tasks/${ids[1]}?view=full`, { token: agent.token });
    expect(handed.json()).toMatchObject({ status: 'in_review', handoff: { summary: 'Fixed and tested.' } });
    const handedIn = await eventsAbout([ids[1] ?? '']);
    expect(types(handedIn).slice(-3)).toEqual(['task.handed_in', 'lease.released', 'task.status_changed']);
    expect(handedIn.at(-1)).toMatchObject({ actor_id: agent.id, data: { from: 'in_progress', to: 'in_review' } });
    const claimed = await eventsAbout([ids[0] ?? '']);
    expect(types(claimed).slice(-2)).toEqual(['task.claimed', 'task.status_changed']);
    expect(claimed.at(-2)).toMatchObject({ actor_id: agent.id, data: { lease_id: body.claims[0]?.lease.id } });
  });

  it('replays the same Idempotency-Key with the original answer and no new write; another body under it is refused', async () => {
    const { label } = await queue(3);
    const [first] = await claim(agent, label);
    const request = { summary: 'Done.', labels: [label] };
    const once = await cycle(agent.token, first?.lease.id ?? '', request, { key: `cycle-replay-${label}` });
    expect(once.status, once.body).toBe(200);
    const before = (await eventsAbout([first?.task.id ?? ''])).length;
    const claimedBefore = (await sql<{ n: string }>`SELECT count(*) AS n FROM events WHERE type = 'task.claimed'`.execute(cluster.database.db)).rows[0]?.n;
    const again = await cycle(agent.token, first?.lease.id ?? '', request, { key: `cycle-replay-${label}`, via: INSTANCES - 1 });
    expect(again.status, again.body).toBe(200);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json()).toEqual(once.json());
    expect((await eventsAbout([first?.task.id ?? ''])).length).toBe(before);
    expect((await sql<{ n: string }>`SELECT count(*) AS n FROM events WHERE type = 'task.claimed'`.execute(cluster.database.db)).rows[0]?.n).toBe(claimedBefore);
    const changed = await cycle(agent.token, first?.lease.id ?? '', { ...request, summary: 'Other.' }, { key: `cycle-replay-${label}` });
    expect(changed.status, changed.body).toBe(422);
    expect(changed.json()).toMatchObject({ code: 'idempotency_key_reused' });
    // Without the key, the lease is gone: the first call ended it.
    const fresh = await cycle(agent.token, first?.lease.id ?? '', request);
    expect(fresh.status, fresh.body).toBe(409);
    expect(fresh.json()).toMatchObject({ code: 'lease_inactive' });
  });

  it('with outcome failed counts the attempt and never claims the same task back in the same call', async () => {
    const { label, ids } = await queue(1);
    const [first] = await claim(agent, label);
    const res = await cycle(agent.token, first?.lease.id ?? '', { outcome: 'failed', reason: 'The build server is down.', labels: [label] });
    expect(res.status, res.body).toBe(200);
    const body = res.json<Cycled>();
    expect(body.ended.task).toMatchObject({ id: ids[0], status: 'todo' });
    expect(body.ended.lease.state).toBe('released');
    // The suite's back-off is 0 s: the task is claimable again, but not by the call that gave it back.
    expect(body.claims).toEqual([]);
    expect(body.retry_after_s).toBeGreaterThan(0);
    expect(types(await eventsAbout([ids[0] ?? ''])).slice(-3)).toEqual(['lease.released', 'task.attempt_failed', 'task.status_changed']);
    expect(await claim(agent, label)).toHaveLength(1);
  });

  it('answers an empty queue with no claim and retry_after_s, the hand-in done', async () => {
    const { label, ids } = await queue(1);
    const [first] = await claim(agent, label);
    const body = (await cycle(agent.token, first?.lease.id ?? '', { summary: 'Done.', labels: [label] })).json<Cycled>();
    expect(body).toMatchObject({ claims: [], retry_after_s: expect.any(Number) as number, ended: { task: { id: ids[0], status: 'in_review' } } });
  });

  it('refuses, writing nothing: no summary, a reason with handed_in, a lease of another agent, an ended lease', async () => {
    const { label, ids } = await queue(2);
    const [mine] = await claim(agent, label);
    const leaseId = mine?.lease.id ?? '';
    const missing = await cycle(agent.token, leaseId, {});
    expect(missing.status, missing.body).toBe(400);
    expect(missing.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/summary' }] });
    const mixed = await cycle(agent.token, leaseId, { summary: 'x', reason: 'y' });
    expect(mixed.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/reason' }] });
    const foreign = await cycle(other.token, leaseId, { summary: 'Not mine.', labels: [label] });
    expect(foreign.status, foreign.body).toBe(403);
    expect(foreign.json()).toMatchObject({ code: 'not_lease_holder' });
    expect(await getTask(cluster, mine?.task.id ?? '')).toMatchObject({ status: 'in_progress', lease: { id: leaseId } });
    expect(await getTask(cluster, ids[1] ?? '')).toMatchObject({ status: 'todo' });
    expect((await cluster.request('POST', `/api/v1/leases/${leaseId}/release`, { token: agent.token, body: {} })).status).toBe(200);
    const ended = await cycle(agent.token, leaseId, { summary: 'Too late.', labels: [label] });
    expect(ended.status, ended.body).toBe(409);
    expect(await getTask(cluster, ids[1] ?? '')).toMatchObject({ status: 'todo' });
  });
});

describe('POST /api/v1/leases/cycle', () => {
  it('ends a batch (hand-ins and a failure) and claims as many next tasks, in one call', async () => {
    const { label, ids } = await queue(8);
    const held = await claim(agent, label, 4);
    const leases = held.map((c, i) => (i === 3 ? { id: c.lease.id, outcome: 'failed', reason: 'flaky' } : { id: c.lease.id, summary: `done ${i}` }));
    const res = await cycleMany(agent.token, { leases, labels: [label] });
    expect(res.status, res.body).toBe(200);
    const body = res.json<CycledMany>();
    expect(body.ended.map((e) => e.lease.id)).toEqual(held.map((c) => c.lease.id));
    expect(body.ended.map((e) => e.task.status)).toEqual(['in_review', 'in_review', 'in_review', 'todo']);
    expect(body.claims).toHaveLength(4);
    const claimedIds = body.claims.map((c) => c.task.id);
    expect(claimedIds).toEqual(ids.slice(4, 8));
    for (const c of body.claims) expect(types(await eventsAbout([c.task.id])).slice(-2)).toEqual(['task.claimed', 'task.status_changed']);
    for (const e of body.ended.slice(0, 3)) expect(types(await eventsAbout([e.task.id])).slice(-3)).toEqual(['task.handed_in', 'lease.released', 'task.status_changed']);

    const limited = await cycleMany(agent.token, { leases: body.claims.slice(0, 2).map((c) => ({ id: c.lease.id, summary: 'ok' })), labels: [label], limit: 0 });
    expect(limited.json<CycledMany>()).toMatchObject({ claims: [], ended: [{ task: { status: 'in_review' } }, { task: { status: 'in_review' } }] });
  });

  it('is all or none: a lease of another agent leaves every lease held and claims nothing', async () => {
    const { label, ids } = await queue(4);
    const mine = await claim(agent, label, 2);
    const theirs = await claim(other, label, 1);
    const leases = [...mine, ...theirs].map((c) => ({ id: c.lease.id, summary: 'done' }));
    const res = await cycleMany(agent.token, { leases, labels: [label] });
    expect(res.status, res.body).toBe(403);
    expect(res.json()).toMatchObject({ code: 'not_lease_holder', detail: expect.stringContaining(theirs[0]?.lease.id ?? '') as string });
    for (const c of [...mine, ...theirs]) expect(await getTask(cluster, c.task.id)).toMatchObject({ status: 'in_progress', lease: { id: c.lease.id } });
    expect(await getTask(cluster, ids[3] ?? '')).toMatchObject({ status: 'todo' });
    const bad = await cycleMany(agent.token, { leases: [{ id: mine[0]?.lease.id }, { id: mine[1]?.lease.id, summary: 'x' }] });
    expect(bad.status, bad.body).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/leases/0/summary' }] });
  });
});

describe('concurrent cycling', () => {
  it(`agents cycling at once (through ${INSTANCES} instance(s)) never claim a task twice; every task is claimed and handed in once`, { timeout: 120_000 }, async () => {
    const TASKS = 120;
    const { label, ids } = await queue(TASKS);
    const agents = await Promise.all(Array.from({ length: 8 }, () => cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));
    const claimedBy = new Map<string, string[]>();
    const note = (who: Principal, claims: readonly Claim[]) => {
      for (const c of claims) claimedBy.set(c.task.id, [...(claimedBy.get(c.task.id) ?? []), who.id]);
    };
    await Promise.all(
      agents.map(async (who, n) => {
        const batch = n % 4 === 3 ? 4 : 1;
        const via = n % INSTANCES;
        let held = await claim(who, label, batch);
        note(who, held);
        while (held.length > 0) {
          const leases = held.map((c) => ({ id: c.lease.id, summary: `done by ${who.id}` }));
          const res = batch === 1 ? await cycle(who.token, held[0]?.lease.id ?? '', { ...leases[0], id: undefined, labels: [label] }, { via }) : await cycleMany(who.token, { leases, labels: [label] }, via);
          expect(res.status, res.body).toBe(200);
          held = res.json<Cycled | CycledMany>().claims;
          note(who, held);
        }
      }),
    );
    expect([...claimedBy.keys()].sort()).toEqual([...ids].sort());
    expect([...claimedBy.values()].filter((holders) => holders.length !== 1)).toEqual([]);
    const claimedEvents = await eventsAbout(ids, 'task.claimed');
    expect(claimedEvents).toHaveLength(TASKS);
    const handedIn = await eventsAbout(ids, 'task.handed_in');
    expect(new Set(handedIn.map((e) => e.subject)).size).toBe(TASKS);
    expect(handedIn).toHaveLength(TASKS);
  });
});
