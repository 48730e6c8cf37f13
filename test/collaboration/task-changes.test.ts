import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectV2, listen, problemOf } from '../mcp/clients.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';

/**
 * Issue 36 item 1 through tasks_update: an agent changes only unassigned tasks, its own and those
 * it created; sending work in review back (or approving it) needs tasks:review, as tasks_review does.
 */
let t: TestServer;
let alice: Principal;
let bob: Principal;
let reviewer: Principal;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  const scopes = ['tasks:read', 'tasks:write', 'tasks:claim'] as const;
  alice = await t.addPrincipal({ kind: 'agent', scopes: [...scopes], name: 'alice' });
  bob = await t.addPrincipal({ kind: 'agent', scopes: [...scopes], name: 'bob' });
  reviewer = await t.addPrincipal({ kind: 'agent', scopes: [...scopes, 'tasks:review'], name: 'reviewer' });
  mcp = await connectV2(await listen(t), bob.token, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const patch = (id: string, body: Record<string, unknown>, token?: string) => t.request('PATCH', `/api/v1/tasks/${id}`, { body, ...(token ? { token } : {}) });
const full = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<{ status: string; title: string; version: number }>();

/** A task alice claimed and handed in. */
async function alicesHandIn(): Promise<string> {
  const task = await createTask(t);
  const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: alice.token })).json<{ lease: { epoch: number } }>();
  const handIn = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Done.', lease_epoch: claim.lease.epoch }, token: alice.token });
  expect(handIn.status, handIn.body).toBe(200);
  return task.id;
}

describe("another agent's task through tasks_update", () => {
  it('an agent without tasks:review cannot send work in review back, as with tasks_review: 403 forbidden_scope, nothing written', async () => {
    const id = await alicesHandIn();
    const before = await eventsOf(t, id);
    expectProblem(await patch(id, { status: 'in_progress' }, bob.token), 403, 'forbidden_scope');
    expectProblem(await t.request('POST', `/api/v1/tasks/${id}/review`, { body: { decision: 'request_changes', comment: 'Redo.' }, token: bob.token }), 403, 'forbidden_scope');
    expect((await full(id)).status).toBe('in_review');
    expect(await eventsOf(t, id)).toHaveLength(before.length);
  });

  it('an agent cannot cancel or rename work in review handed in by another, nor a task assigned to another: 403 not_your_task', async () => {
    const inReview = await alicesHandIn();
    const problem = expectProblem(await patch(inReview, { status: 'cancelled' }, bob.token), 403, 'not_your_task');
    expect(problem.hint).toMatch(/ask a human/);
    const assigned = await createTask(t, { title: 'for alice', assignee: alice.id });
    for (const body of [{ status: 'cancelled' }, { title: 'mine now' }, { description: 'something else' }, { status: 'blocked' }]) {
      expect(expectProblem(await patch(assigned.id, body, bob.token), 403, 'not_your_task').assignee).toEqual({ id: alice.id, kind: 'agent' });
    }
    expect(await full(inReview)).toMatchObject({ status: 'in_review' });
    expect(await full(assigned.id)).toMatchObject({ status: 'todo', title: 'for alice', version: 1 });
  });

  it('a reviewer approves or sends back anyone\'s work through a status update, but cannot cancel it', async () => {
    const back = await alicesHandIn();
    expectProblem(await patch(back, { status: 'cancelled' }, reviewer.token), 403, 'not_your_task');
    expectProblem(await patch(back, { status: 'in_progress', title: 'renamed' }, reviewer.token), 403, 'not_your_task');
    const sent = await patch(back, { status: 'in_progress' }, reviewer.token);
    expect(sent.status, sent.body).toBe(200);
    const done = await patch(await alicesHandIn(), { status: 'done' }, reviewer.token);
    expect(done.status, done.body).toBe(200);
  });

  it('an agent changes unassigned tasks, its own, and those it created and assigned to another; humans change any', async () => {
    expect((await patch((await createTask(t)).id, { title: 'open' }, bob.token)).status).toBe(200);
    const own = await createTask(t, { assignee: bob.id });
    expect((await patch(own.id, { title: 'mine', status: 'cancelled' }, bob.token)).status).toBe(200);
    const handedOut = (await t.request('POST', '/api/v1/tasks', { body: { title: 'for alice', assignee: alice.id }, token: bob.token })).json<{ id: string }>();
    const edited = await patch(handedOut.id, { description: 'more detail', status: 'cancelled' }, bob.token);
    expect(edited.status, edited.body).toBe(200);
    const assigned = await createTask(t, { assignee: alice.id });
    expect((await patch(assigned.id, { title: 'by a human', status: 'cancelled' })).status).toBe(200);
    expect((await patch(await alicesHandIn(), { status: 'in_progress' })).status).toBe(200);
  });

  it('next_actions offers an agent no status move on a task assigned to another', async () => {
    const assigned = await createTask(t, { assignee: alice.id });
    await patch(assigned.id, { status: 'blocked' });
    const actions = (await t.request('GET', `/api/v1/tasks/${assigned.id}`, { token: bob.token })).json<{ next_actions: { operation: string }[] }>().next_actions;
    expect(actions.map((a) => a.operation)).not.toContain('tasks_update');
    const alices = (await t.request('GET', `/api/v1/tasks/${assigned.id}`, { token: alice.token })).json<{ next_actions: { operation: string }[] }>().next_actions;
    expect(alices.map((a) => a.operation)).toContain('tasks_update');
  });

  it('is the same over MCP: tasks_update answers forbidden_scope and not_your_task', async () => {
    const inReview = await alicesHandIn();
    const call = (args: Record<string, unknown>) => mcp.callTool({ name: 'tasks_update', arguments: args });
    expect(problemOf(await call({ id: inReview, status: 'in_progress' }))).toMatchObject({ code: 'forbidden_scope', status: 403 });
    expect(problemOf(await call({ id: inReview, status: 'cancelled' }))).toMatchObject({ code: 'not_your_task', status: 403 });
    const assigned = await createTask(t, { assignee: alice.id });
    expect(problemOf(await call({ id: assigned.id, title: 'mine now' }))).toMatchObject({ code: 'not_your_task', status: 403, assignee: { id: alice.id } });
    expect((await full(inReview)).status).toBe('in_review');
  });
});
