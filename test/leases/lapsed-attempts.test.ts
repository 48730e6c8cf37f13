import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';
import {
  type Claim,
  claimTask,
  type Cluster,
  CRON_SECRET,
  createTask,
  type EventBody,
  getTask,
  INSTANCES,
  startInstances,
  sweep,
  taskEvents,
  testClock,
  WORKER_SCOPES,
} from './instances.ts';

/*
 * A lease that lapses is a failed attempt however the lapse is found: by the sweeper, or by the
 * claim that would take the task next (issue 36, item 2). Time is the servers' injected clock, moved
 * by the test between rounds; the sweeper loop is off and sweeps run only where a test races one.
 */

const MAX_ATTEMPTS = 3;
/** Back-off after the first and second failed attempt: two and three rounds of one second. */
const BACKOFF_S = [2, 3];

interface FullTask {
  id: string;
  status: string;
  attempts: number;
  not_before: string | null;
  blocked_reason: string | null;
  failures: { kind: string; lease_id: string }[];
}

describe('a claim that finds a lapsed lease counts it as the sweeper does', () => {
  const clock = testClock();
  let c: Cluster;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { leaseTtl: { defaultS: 1, minS: 1, maxS: 3600 }, maxAttempts: MAX_ATTEMPTS, retryBackoffS: BACKOFF_S, sweepIntervalMs: 0, cronSecret: CRON_SECRET }, clock);
  });
  afterAll(() => c.close());

  const full = async (id: string) => (await c.request('GET', `/api/v1/tasks/${id}?view=full`)).json<FullTask>();
  const sweepAll = () => Promise.all(Array.from({ length: INSTANCES }, (_, via) => sweep(c, via)));

  it('8 agents polling with 1 s leases they let lapse: every lapse counted once, no grant in back-off, every task dead-lettered', { timeout: 600_000 }, async () => {
    const TASKS = 12;
    const label = 'poison';
    const tasks = new Set<string>();
    for (let i = 0; i < TASKS; i++) tasks.add((await createTask(c, { labels: [label] })).id);
    const agents = await Promise.all(Array.from({ length: 8 }, () => c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));
    /** Every lease granted, by task: none is heartbeaten, handed in or released, so each lapses. */
    const granted = new Map<string, string[]>([...tasks].map((id) => [id, []]));

    /** One agent's poll: claims until the queue has nothing for it, holding every lease it gets. */
    const poll = async (agent: Principal, via: number) => {
      for (;;) {
        const res = await c.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: { labels: [label], ttl_s: 1 }, via });
        expect(res.status, res.body).toBe(200);
        const { claims } = res.json<{ claims: Claim[] }>();
        if (claims.length === 0) return;
        for (const { task, lease } of claims) granted.get(task.id)?.push(lease.id);
      }
    };
    const deadLettered = async () => {
      const res = await c.request('GET', `/api/v1/tasks?labels=${label}&blocked_reason=attempts_exhausted&limit=100`);
      expect(res.status, res.body).toBe(200);
      return res.json<{ data: unknown[] }>().data.length;
    };

    // Each round the agents poll at once (every third round a sweep on every instance races them),
    // then a second passes: every lease granted in the round lapses.
    for (let round = 0; round < 40 && (await deadLettered()) < TASKS; round++) {
      await Promise.all([...agents.map((agent, i) => poll(agent, i % INSTANCES)), ...(round % 3 === 2 ? [sweepAll()] : [])]);
      clock.advance(1_000);
    }
    // The last lapses are counted by whoever finds them first: one more poll and sweep, at once.
    await Promise.all([...agents.map((agent, i) => poll(agent, i % INSTANCES)), sweepAll()]);

    for (const id of tasks) {
      const leases = granted.get(id) ?? [];
      expect(await full(id), id).toMatchObject({ status: 'blocked', blocked_reason: 'attempts_exhausted', attempts: MAX_ATTEMPTS });
      expect(leases, id).toHaveLength(MAX_ATTEMPTS);
      const events = await taskEvents(c, id);
      const of = (type: string) => events.filter((e) => e.type === type);
      // Every lease granted lapsed and was counted exactly once, by the system: one expiry, one failed attempt.
      expect(of('lease.expired').map((e) => e.data.lease_id), id).toEqual(leases);
      expect(of('task.attempt_failed').map((e) => [e.data.lease_id, e.data.attempt, e.data.kind]), id).toEqual(leases.map((lease, n) => [lease, n + 1, 'expired']));
      expect(of('task.claimed').map((e) => e.data.lease_id), id).toEqual(leases);
      expect(of('task.dead_lettered'), id).toHaveLength(1);
      for (const type of ['lease.expired', 'task.attempt_failed', 'task.dead_lettered']) expect(new Set(of(type).map((e) => e.actor.kind)), `${id} ${type}`).toEqual(new Set(['system']));
      // No grant during a back-off: each claim after a failed attempt comes at or after its not_before.
      expectNoGrantInBackoff(events);
    }
  });

  it('tasks_claim of a lapsed task: refused in back-off (the sweeper counts the lapse once), refused when it was the last attempt', async () => {
    const agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const other = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const task = await createTask(c, { max_attempts: 2 });
    const first = await claimTask(c, task.id, agent.token, { ttl_s: 1 });
    clock.setPast(first.lease.expires_at);

    // Counting the lapse would put the task in back-off: refused, and (rolled back) nothing is written.
    const refused = await c.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: other.token, body: { ttl_s: 1 } });
    const problem = expectProblem(refused, 409, 'backoff_pending');
    // The attempt failed when its lease ran out: the back-off runs from then, whoever counts the lapse.
    const notBefore = new Date(Date.parse(first.lease.expires_at) + BACKOFF_S[0]! * 1000).toISOString();
    expect(problem).toMatchObject({ not_before: notBefore, attempts: 1 });
    expect(refused.headers['retry-after']).toBe(String(BACKOFF_S[0]));
    expect(await full(task.id)).toMatchObject({ status: 'in_progress', attempts: 0 });
    expect((await taskEvents(c, task.id)).filter((e) => e.type === 'lease.expired')).toHaveLength(0);

    // The sweep comes later and counts the same lapse to the same not_before the refusal gave.
    clock.advance(1_000);
    await sweepAll();
    await sweepAll();
    expect(await full(task.id)).toMatchObject({ status: 'todo', attempts: 1, not_before: notBefore });
    expectProblem(await c.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: other.token, body: { ttl_s: 1 } }), 409, 'backoff_pending');

    clock.setPast(notBefore, 0);
    const second = await claimTask(c, task.id, other.token, { ttl_s: 1 });
    expect(second.lease.epoch).toBe(2);
    clock.setPast(second.lease.expires_at);
    // This lapse is the task's last attempt: the claim is refused as for a dead-lettered task.
    const last = expectProblem(await c.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} }), 422, 'invalid_transition');
    expect(last).toMatchObject({ current_status: 'blocked' });
    await sweepAll();
    expect(await full(task.id)).toMatchObject({ status: 'blocked', attempts: 2, blocked_reason: 'attempts_exhausted' });
    const events = await taskEvents(c, task.id);
    expect(events.filter((e) => e.type === 'lease.expired').map((e) => e.data.lease_id)).toEqual([first.lease.id, second.lease.id]);
    expect(events.filter((e) => e.type === 'task.attempt_failed').map((e) => e.data.lease_id)).toEqual([first.lease.id, second.lease.id]);
  });

  it('leases_cycle claiming next counts a lapsed lease it finds and does not grant that task in its back-off', async () => {
    const agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const other = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const label = 'cycle-lapse';
    const lapsing = await createTask(c, { labels: [label], priority: 'high' });
    const mine = await createTask(c, { labels: [label] });
    const held = await claimTask(c, mine.id, agent.token, { ttl_s: 600 });
    const lapsed = await claimTask(c, lapsing.id, other.token, { ttl_s: 1 });
    clock.setPast(lapsed.lease.expires_at);

    const res = await c.request('POST', `/api/v1/leases/${held.lease.id}/cycle`, { token: agent.token, body: { summary: 'done', labels: [label] } });
    expect(res.status, res.body).toBe(200);
    const body = res.json<{ claims: Claim[]; next_claimable_at: string | null }>();
    expect(body.claims).toEqual([]);
    expect(body.next_claimable_at).toBe(new Date(Date.parse(lapsed.lease.expires_at) + BACKOFF_S[0]! * 1000).toISOString());
    expect(await full(lapsing.id)).toMatchObject({ status: 'todo', attempts: 1, failures: [{ kind: 'expired', lease_id: lapsed.lease.id }] });
    const events = await taskEvents(c, lapsing.id);
    expect(events.filter((e) => e.type === 'lease.expired')).toMatchObject([{ actor: { kind: 'system' }, data: { lease_id: lapsed.lease.id } }]);
    expect((await getTask(c, lapsing.id)).lease).toBeNull();
    // A sweep after the claim counted it finds nothing left to count.
    await sweepAll();
    const after = await taskEvents(c, lapsing.id);
    expect(after.filter((e) => e.type === 'lease.expired')).toHaveLength(1);
    expect(after.filter((e) => e.type === 'task.attempt_failed')).toHaveLength(1);
  });

  it('one claim counts at most 3 picks of lapsed leases and leaves the rest to the next claim or the sweeper', async () => {
    const agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const other = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const label = 'lapsed-pile';
    const lapsing = await Promise.all(Array.from({ length: 4 }, () => createTask(c, { labels: [label], priority: 'high' })));
    const waiting = await createTask(c, { labels: [label], priority: 'low' });
    const leases = await Promise.all(lapsing.map((task) => claimTask(c, task.id, other.token, { ttl_s: 1 })));
    clock.setPast(leases.map((l) => l.lease.expires_at).sort().at(-1) ?? '');

    const claim = async () => (await c.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: { labels: [label] } })).json<{ claims: Claim[] }>();
    const counted = async () => (await Promise.all(lapsing.map((task) => full(task.id)))).filter((task) => task.attempts === 1).length;
    expect((await claim()).claims).toEqual([]);
    expect(await counted()).toBe(3);
    expect((await claim()).claims.map((claimed) => claimed.task.id)).toEqual([waiting.id]);
    expect(await counted()).toBe(4);
  });
});

/** Each `task.claimed` that follows a `task.attempt_failed` comes at or after that attempt's `not_before`. */
function expectNoGrantInBackoff(events: readonly (EventBody & { created_at?: string })[]): void {
  let notBefore: string | null = null;
  for (const event of events) {
    if (event.type === 'task.attempt_failed') notBefore = (event.data.not_before as string | null) ?? null;
    if (event.type === 'task.claimed' && notBefore !== null) expect(Date.parse(event.created_at ?? ''), `${event.subject} claimed in back-off`).toBeGreaterThanOrEqual(Date.parse(notBefore));
  }
}
