import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';

/** The server's clock, moved by the test: back-off and lease expiry without sleeping. */
let at = new Date('2026-11-25T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const advance = (seconds: number) => (at = new Date(at.getTime() + seconds * 1000));

interface Claim {
  task: { id: string };
  lease: { id: string; epoch: number };
}
interface FullTask {
  id: string;
  status: string;
  attempts: number;
  max_attempts: number | null;
  not_before: string | null;
  blocked_reason: string | null;
  failures: { kind: string; reason: string | null }[];
}

let t: TestServer;
let agent: Principal;
beforeAll(async () => {
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0, maxAttempts: 3, retryBackoffS: [30, 300] }, { clock });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
});
afterAll(() => t.close());

const full = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<FullTask>();
const claim = async (id: string) => {
  const res = await t.request('POST', `/api/v1/tasks/${id}/claim`, { body: { ttl_s: 60 }, token: agent.token });
  expect(res.status, res.body).toBe(200);
  return res.json<Claim>();
};
const fail = (lease: string, reason = 'the tests do not pass') => t.request('POST', `/api/v1/leases/${lease}/release`, { body: { outcome: 'failed', reason }, token: agent.token });
const sweep = () => t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });

/** The list items (default view) of the tasks carrying `label`. */
async function listed(label: string): Promise<Record<string, unknown>[]> {
  const res = await t.request('GET', `/api/v1/tasks?labels=${label}`);
  expect(res.status, res.body).toBe(200);
  return res.json<{ data: Record<string, unknown>[] }>().data;
}

describe('failed attempts', () => {
  it('a release with outcome failed needs a reason (400 naming it), and a plain release counts nothing', async () => {
    const task = await createTask(t, { labels: ['plain'] });
    const held = await claim(task.id);
    const problem = expectProblem(await t.request('POST', `/api/v1/leases/${held.lease.id}/release`, { body: { outcome: 'failed' }, token: agent.token }), 400, 'validation_failed');
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/reason' })]);
    expect((await t.request('POST', `/api/v1/leases/${held.lease.id}/release`, { body: {}, token: agent.token })).status).toBe(200);
    expect(await full(task.id)).toMatchObject({ status: 'todo', attempts: 0, not_before: null });
  });

  it('counts the attempt and backs off: not claimable until not_before, and an empty queue says when', async () => {
    const task = await createTask(t, { labels: ['backoff'] });
    expect((await listed('backoff'))[0]).not.toHaveProperty('attempts');
    const held = await claim(task.id);
    const res = await fail(held.lease.id);
    expect(res.status, res.body).toBe(200);
    const failedAt = at.getTime();
    const after = await full(task.id);
    expect(after).toMatchObject({ status: 'todo', attempts: 1, blocked_reason: null, failures: [{ kind: 'failed', reason: 'the tests do not pass' }] });
    expect(Date.parse(after.not_before ?? '')).toBe(failedAt + 30_000);
    expect((await eventsOf(t, task.id)).map((e) => e.type).slice(-3)).toEqual(['lease.released', 'task.attempt_failed', 'task.status_changed']);
    // A list item (the board's view) says so too: the count and the back-off, only where there was a failure.
    const [item] = await listed('backoff');
    expect(item).toMatchObject({ id: task.id, attempts: 1, max_attempts: after.max_attempts, not_before: after.not_before });
    expect(item).not.toHaveProperty('blocked_reason');

    const refused = expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent.token }), 409, 'backoff_pending');
    expect(refused.not_before).toBe(after.not_before);
    const empty = (await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['backoff'] }, token: agent.token })).json<{ claims: Claim[]; next_claimable_at: string | null; retry_after_s: number }>();
    expect(empty).toMatchObject({ claims: [], next_claimable_at: after.not_before, retry_after_s: 10 });

    advance(30);
    const next = (await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['backoff'] }, token: agent.token })).json<{ claims: Claim[] }>();
    expect(next.claims.map((c) => c.task.id)).toEqual([task.id]);
  });

  it('a lapsed lease counts too (by the sweeper, as the system), and exhausted attempts land in the dead-letter; a human requeues it', async () => {
    const task = await createTask(t, { labels: ['doomed'], max_attempts: 2 });
    const first = await claim(task.id);
    advance(61);
    expect((await sweep()).status).toBe(200);
    const lapsed = await full(task.id);
    expect(lapsed).toMatchObject({ status: 'todo', attempts: 1, failures: [{ kind: 'expired', reason: null }] });
    const events = await eventsOf(t, task.id);
    const attempt = events.filter((e) => e.type === 'task.attempt_failed');
    expect(attempt.map((e) => e.actor_kind)).toEqual(['system']);
    expect(attempt[0]?.data).toMatchObject({ attempt: 1, max_attempts: 2, lease_id: first.lease.id });

    advance(30);
    const second = await claim(task.id);
    expect((await fail(second.lease.id, 'out of memory')).status).toBe(200);
    const dead = await full(task.id);
    expect(dead).toMatchObject({ status: 'blocked', attempts: 2, blocked_reason: 'attempts_exhausted', not_before: null });
    expect(dead.failures.map((f) => f.kind)).toEqual(['expired', 'failed']);
    const [item] = await listed('doomed');
    expect(item).toMatchObject({ id: task.id, attempts: 2, max_attempts: 2, blocked_reason: 'attempts_exhausted' });
    expect(item).not.toHaveProperty('not_before');
    expect((await eventsOf(t, task.id)).map((e) => e.type).slice(-2)).toEqual(['task.status_changed', 'task.dead_lettered']);
    const view = (await t.request('GET', '/api/v1/tasks?blocked_reason=attempts_exhausted')).json<{ data: { id: string }[] }>();
    expect(view.data.map((x) => x.id)).toContain(task.id);
    expect((await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['doomed'] }, token: agent.token })).json<{ claims: Claim[] }>().claims).toEqual([]);

    expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/requeue`, { token: agent.token }), 403, 'human_required');
    const requeued = await t.request('POST', `/api/v1/tasks/${task.id}/requeue`);
    expect(requeued.status, requeued.body).toBe(200);
    expect(requeued.json<FullTask>()).toMatchObject({ status: 'todo', attempts: 0, blocked_reason: null });
    expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/requeue`), 409, 'not_dead_lettered');
    expect((await t.request('GET', '/api/v1/tasks?blocked_reason=attempts_exhausted')).json<{ data: { id: string }[] }>().data.map((x) => x.id)).not.toContain(task.id);
    expect((await claim(task.id)).task.id).toBe(task.id);
  });
});
