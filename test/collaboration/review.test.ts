import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';
import type { NextAction } from '../agent/follow.ts';

interface Claimed {
  task: { id: string };
  lease: { id: string; epoch: number };
  discussion: { changes_requested: { id: string; body: string } | null; human_comments: { body: string }[] };
}
interface FullTask {
  id: string;
  status: string;
  assignee: { id: string; kind: string } | null;
  lease: { holder: { id: string }; epoch: number } | null;
  handoff: { summary: string; artifacts: string[]; by: { id: string } } | null;
  discussion?: Claimed['discussion'];
}

let t: TestServer;
let worker: Principal;
let reviewer: Principal;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  worker = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'artifacts:write'], name: 'worker' });
  reviewer = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review'], name: 'rita' });
});
afterAll(() => t.close());

const full = async (id: string, token?: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`, token ? { token } : {})).json<FullTask>();
const review = (id: string, body: Record<string, unknown>, token = reviewer.token) => t.request('POST', `/api/v1/tasks/${id}/review`, { body, token });

async function handedIn(): Promise<{ id: string; artifact: string; epoch: number }> {
  const task = await createTask(t);
  const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: worker.token })).json<Claimed>();
  const artifact = (await t.request('POST', '/api/v1/artifacts', { body: { content: 'diff --git', task_id: task.id }, token: worker.token })).json<{ id: string }>();
  const res = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, {
    body: { summary: 'Implemented the parser; run `npm test`.', artifacts: [artifact.id], lease_epoch: claim.lease.epoch },
    token: worker.token,
  });
  expect(res.status, res.body).toBe(200);
  return { id: task.id, artifact: artifact.id, epoch: claim.lease.epoch };
}

describe('tasks_hand_in', () => {
  it('moves in_progress to in_review, ends the lease, and shows the reviewer the summary and artifacts', async () => {
    const { id, artifact } = await handedIn();
    const task = await full(id, reviewer.token);
    expect(task).toMatchObject({ status: 'in_review', lease: null, handoff: { summary: 'Implemented the parser; run `npm test`.', artifacts: [artifact], by: { id: worker.id } } });
    expect((await eventsOf(t, id)).map((e) => e.type).slice(-3)).toEqual(['task.handed_in', 'lease.released', 'task.status_changed']);
  });

  it('the offered hand-in is ready to send: a v1 client that ignores fill hands in with an empty summary', async () => {
    const task = await createTask(t);
    const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: worker.token })).json<Claimed & { task: { next_actions: NextAction[] } }>();
    const handIn = claim.task.next_actions.find((action) => action.operation === 'tasks_hand_in');
    expect(handIn?.fill).toEqual(['summary']);
    const res = await t.request('POST', handIn?.href ?? '', { body: handIn?.body ?? {}, token: worker.token, headers: handIn?.headers ?? {} });
    expect(res.status, res.body).toBe(200);
    expect(await full(task.id, reviewer.token)).toMatchObject({ status: 'in_review', handoff: { summary: '', by: { id: worker.id } } });
  });

  it('refuses a stale epoch, someone else, unknown artifacts, and a task not in progress', async () => {
    const task = await createTask(t);
    const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: worker.token })).json<Claimed>();
    const other = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:claim', 'tasks:read'] });
    const send = (body: Record<string, unknown>, token = worker.token) => t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'done', ...body }, token });
    expectProblem(await send({ lease_epoch: claim.lease.epoch + 1 }), 409, 'lease_expired');
    expectProblem(await send({}, other.token), 403, 'not_lease_holder');
    expectProblem(await send({ artifacts: ['art_01ARZ3NDEKTSV4RRFFQ69G5FAV'] }), 400, 'validation_failed');
    expectProblem(await send({ summary: 'x'.repeat(2001) }), 400, 'validation_failed');
    expect((await full(task.id)).status).toBe('in_progress');
    const unclaimed = expectProblem(await t.request('POST', `/api/v1/tasks/${(await createTask(t)).id}/hand_in`, { body: { summary: 'never claimed' }, token: worker.token }), 422, 'invalid_transition');
    expect(unclaimed.hint).toMatch(/^Claim the task first \(POST \/api\/v1\/tasks\/tsk_\w+\/claim\)/);
    // Handed in twice (a retry with a new key): the hint says it waits for review, not to claim it.
    expect((await send({})).status).toBe(200);
    const again = expectProblem(await send({}), 422, 'invalid_transition');
    expect(again.hint).toMatch(/^It was handed in and waits for a reviewer: GET \/api\/v1\/wait returns when/);
  });
});

describe('tasks_review', () => {
  it('approve moves in_review to done', async () => {
    const { id } = await handedIn();
    const res = await review(id, { decision: 'approve', comment: 'Lovely.' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>().status).toBe('done');
  });

  it('request_changes needs a comment: 400 validation_failed pointing at /comment, nothing written', async () => {
    const { id } = await handedIn();
    const before = (await eventsOf(t, id)).length;
    const problem = expectProblem(await review(id, { decision: 'request_changes' }), 400, 'validation_failed');
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/comment' })]);
    expect(await eventsOf(t, id)).toHaveLength(before);
  });

  it('request_changes sends the work back to the same agent, who sees the comment first on resume and on its next claim', async () => {
    const { id } = await handedIn();
    const res = await review(id, { decision: 'request_changes', comment: 'Please handle empty input too.' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>()).toMatchObject({ status: 'in_progress', assignee: { id: worker.id }, lease: { holder: { id: worker.id } } });
    const types = (await eventsOf(t, id)).map((e) => e.type);
    expect(types.slice(-5)).toEqual(['comment.created', 'task.claimed', 'task.changes_requested', 'task.assigned', 'task.status_changed']);

    // Resume: the agent reads its task and finds the change request first.
    const resumed = await full(id, worker.token);
    expect(resumed.discussion?.changes_requested?.body).toBe('Please handle empty input too.');
    expect(resumed.discussion?.human_comments).toEqual([]);

    // The fresh lease lapses; the task returns to the queue, still the worker's, and its claim carries the request.
    const other = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:claim'] });
    await t.database.db.updateTable('tasks').set({ lease_expires_at: new Date(Date.now() - 1000) }).where('id', '=', id).execute();
    expectProblem(await t.request('POST', `/api/v1/tasks/${id}/claim`, { body: {}, token: other.token }), 409, 'assigned_to_other');
    const again = (await t.request('POST', `/api/v1/tasks/${id}/claim`, { body: {}, token: worker.token })).json<Claimed>();
    expect(again.discussion.changes_requested?.body).toBe('Please handle empty input too.');

    const second = await t.request('POST', `/api/v1/tasks/${id}/hand_in`, { body: { summary: 'Empty input handled.', lease_epoch: again.lease.epoch }, token: worker.token });
    expect(second.status, second.body).toBe(200);
    expect((await eventsOf(t, id)).filter((e) => e.type === 'task.handed_in').at(-1)?.data).toMatchObject({ answers: resumed.discussion?.changes_requested?.id });
    expect((await full(id, worker.token)).discussion?.changes_requested).toBeNull();
    expect((await review(id, { decision: 'approve' })).json<FullTask>().status).toBe('done');
  });

  it('is for tasks:review holders only, and only on work in review', async () => {
    const { id } = await handedIn();
    const problem = expectProblem(await review(id, { decision: 'approve' }, worker.token), 403, 'forbidden_scope');
    expect(problem.required_scope).toBe('tasks:review');
    expectProblem(await review((await createTask(t)).id, { decision: 'approve' }), 422, 'invalid_transition');
  });
});
