import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-25T10:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const advance = (seconds: number) => (at = new Date(at.getTime() + seconds * 1000));

interface Discussion {
  changes_requested: { body: string } | null;
  human_comments: { body: string }[];
}
interface Claimed {
  claims: { task: { id: string }; lease: { id: string; epoch: number }; discussion: Discussion }[];
  next_claimable_at: string | null;
}

let t: TestServer;
let human: Principal;
let agent: Principal;
beforeAll(async () => {
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0, maxAttempts: 3, retryBackoffS: [60] }, { clock });
  human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review'], name: 'Hana' });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'], name: 'coder' });
});
afterAll(() => t.close());

const as = (who: Principal) => (method: string, url: string, body?: unknown) => t.request(method, url, { token: who.token, ...(body === undefined ? {} : { body }) });
const ok = async <T>(res: Promise<{ status: number; body: string; json: <U>() => U }>): Promise<T> => {
  const r = await res;
  expect(r.status, r.body).toBeLessThan(300);
  return r.json<T>();
};

it('the whole story: assign with a comment, fail once, back off, hand in, changes requested, resume, done; a second task dead-letters and is requeued', async () => {
  const h = as(human);
  const a = as(agent);
  const task = await ok<{ id: string }>(h('POST', '/api/v1/tasks', { title: 'Add CSV export', labels: ['story'] }));
  await ok(h('POST', `/api/v1/tasks/${task.id}/assign`, { assignee: agent.id, comment: '@coder the customers want this by Friday.' }));

  // The agent claims and sees the human's comment.
  let claim = await ok<Claimed>(a('POST', '/api/v1/tasks/claim', { labels: ['story'] }));
  expect(claim.claims[0]?.discussion.human_comments.map((c) => c.body)).toEqual(['@coder the customers want this by Friday.']);

  // It fails once: the attempt is counted and the back-off honoured.
  await ok(a('POST', `/api/v1/leases/${claim.claims[0]?.lease.id ?? ''}/release`, { outcome: 'failed', reason: 'The test database was down.' }));
  expect((await ok<{ attempts: number }>(h('GET', `/api/v1/tasks/${task.id}?view=full`))).attempts).toBe(1);
  const waiting = await ok<Claimed>(a('POST', '/api/v1/tasks/claim', { labels: ['story'] }));
  expect(waiting.claims).toEqual([]);
  expect(waiting.next_claimable_at).not.toBeNull();
  advance(60);

  // It succeeds and hands in with a summary.
  claim = await ok<Claimed>(a('POST', '/api/v1/tasks/claim', { labels: ['story'] }));
  const lease = claim.claims[0]?.lease;
  await ok(a('POST', `/api/v1/tasks/${task.id}/hand_in`, { summary: 'CSV export behind /export.csv.', lease_epoch: lease?.epoch }));
  expect((await ok<{ handoff: { summary: string } }>(h('GET', `/api/v1/tasks/${task.id}?view=full`))).handoff.summary).toBe('CSV export behind /export.csv.');

  // The human requests changes; the agent resumes and sees them first.
  await ok(h('POST', `/api/v1/tasks/${task.id}/review`, { decision: 'request_changes', comment: 'Quote fields that contain commas.' }));
  const resumed = await ok<{ status: string; lease: { epoch: number }; discussion: Discussion }>(a('GET', `/api/v1/tasks/${task.id}?view=full`));
  expect(resumed.status).toBe('in_progress');
  expect(resumed.discussion.changes_requested?.body).toBe('Quote fields that contain commas.');
  await ok(a('POST', `/api/v1/tasks/${task.id}/hand_in`, { summary: 'Fields with commas are quoted.', lease_epoch: resumed.lease.epoch }));
  expect((await ok<{ status: string }>(h('POST', `/api/v1/tasks/${task.id}/review`, { decision: 'approve' }))).status).toBe('done');

  // A second task exhausts its attempts and lands in the dead-letter; the human requeues it.
  const flaky = await ok<{ id: string }>(h('POST', '/api/v1/tasks', { title: 'Sync the mirror', max_attempts: 2, assignee: agent.id }));
  for (let attempt = 1; attempt <= 2; attempt++) {
    await ok(a('POST', `/api/v1/tasks/${flaky.id}/claim`, { ttl_s: 30 }));
    advance(31);
    expect((await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } })).status).toBe(200);
    advance(60);
  }
  const dead = await ok<{ data: { id: string }[] }>(h('GET', '/api/v1/tasks?blocked_reason=attempts_exhausted'));
  expect(dead.data.map((x) => x.id)).toEqual([flaky.id]);
  expectProblem(await a('POST', `/api/v1/tasks/${flaky.id}/claim`, {}), 422, 'invalid_transition');
  expect((await ok<{ status: string; attempts: number }>(h('POST', `/api/v1/tasks/${flaky.id}/requeue`, {}))).status).toBe('todo');
  expect((await ok<Claimed['claims'][number]>(a('POST', `/api/v1/tasks/${flaky.id}/claim`, {}))).task.id).toBe(flaky.id);
});
