import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { testClock } from '../leases/instances.ts';

/**
 * The in-process maintenance loops (BATON_SWEEP_INTERVAL_MS, here 50 ms of real time) run the passes
 * /cron/keepalive runs, approval expiry among them, and each pass finds the workspaces with work due
 * across every workspace: work in a second workspace is done by the loops alone. Time itself moves
 * through the injectable clock; the test waits for the loops to act, bounded generously.
 */

const clock = testClock();
let t: TestServer;
/** The owner of a second workspace, and an agent of it. */
let owner: string;
let agent: string;

beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 50 }, { clock });
  const made = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Loops' } });
  expect(made.status, made.body).toBe(201);
  owner = made.json<{ token: string }>().token;
  const created = await t.request('POST', '/api/v1/agents', { token: owner, body: { name: 'Loop agent', kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] } });
  expect(created.status, created.body).toBe(201);
  const issued = await t.request('POST', `/api/v1/agents/${created.json<{ id: string }>().id}/tokens`, { token: owner, body: { machine: 'loop-test' } });
  expect(issued.status, issued.body).toBe(201);
  agent = issued.json<{ token: string }>().token;
});
afterAll(() => t?.close());

/** The loops run every 50 ms; waited for, bounded generously. */
const LOOPS = { timeout: 30_000, interval: 50 };

describe('the in-process maintenance loops', () => {
  it("close the inbox items of an approval that expired undecided, in the workspace it is in", async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { token: owner, body: { title: 'Old branch' } })).json<{ id: string }>();
    const requested = await t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent });
    expect(requested.status, requested.body).toBe(202);
    const approval = requested.json<{ id: string; expires_at: string }>();
    const state = async () =>
      (await t.request('GET', '/api/v1/inbox?kind=approval&state=unread,read,done', { token: owner })).json<{ data: { ref_id: string; state: string }[] }>().data.find((i) => i.ref_id === approval.id)?.state;
    expect(await state()).toBe('unread');
    clock.setPast(approval.expires_at, 1000);
    await expect.poll(state, LOOPS).toBe('done');
  });

  it('return a lapsed lease and mark an overdue task in a second workspace', async () => {
    const dueAt = new Date(clock.now().getTime() + 30_000).toISOString();
    const task = (await t.request('POST', '/api/v1/tasks', { token: owner, body: { title: 'Lapses in Loops', due_at: dueAt } })).json<{ id: string }>();
    const claimed = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent, body: { ttl_s: 60 } });
    expect(claimed.status, claimed.body).toBe(200);
    clock.advance(61_000);
    const events = async () => (await t.request('GET', `/api/v1/events?subject=${task.id}&limit=100`, { token: owner })).json<{ data: { type: string }[] }>().data.map((e) => e.type);
    await expect.poll(events, LOOPS).toEqual(expect.arrayContaining(['lease.expired', 'task.overdue']));
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token: owner })).json()).toMatchObject({ status: 'todo' });
    expect((await events()).filter((type) => type === 'task.overdue')).toHaveLength(1);
  });
});
