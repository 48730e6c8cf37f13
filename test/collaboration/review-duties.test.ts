import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';

/**
 * Who a review may hand work back to, and who may approve it (issue 36 items 3 and 4): request
 * changes used to hand the lease and the assignment to a disabled agent, where the task waited
 * forever; and whoever handed work in could approve it.
 */

interface FullTask {
  id: string;
  status: string;
  version: number;
  assignee: { id: string } | null;
  lease: { holder: { id: string } } | null;
}

const WORKER_SCOPES = ['tasks:read', 'tasks:write', 'tasks:claim'] as const;

let t: TestServer;
let reviewer: Principal;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  reviewer = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review'], name: 'rita' });
});
afterAll(() => t.close());

const full = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<FullTask>();
const review = (id: string, body: Record<string, unknown>, token = reviewer.token) => t.request('POST', `/api/v1/tasks/${id}/review`, { body, token });
const disable = async (who: Principal) => expect((await t.request('PATCH', `/api/v1/agents/${who.id}`, { body: { disabled: true } })).status).toBe(200);

/** A task `by` claimed and handed in (as `handedInBy`, its holder unless given); it is in review. */
async function handedIn(server: TestServer, by: Principal, options: { assignee?: string; handedInBy?: string } = {}): Promise<string> {
  const task = await createTask(server, options.assignee ? { assignee: options.assignee } : {});
  const claim = await server.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: by.token });
  expect(claim.status, claim.body).toBe(200);
  const epoch = claim.json<{ lease: { epoch: number } }>().lease.epoch;
  const body = options.handedInBy ? { summary: 'Done for them.' } : { summary: 'Done.', lease_epoch: epoch };
  const res = await server.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { body, token: options.handedInBy ?? by.token });
  expect(res.status, res.body).toBe(200);
  return task.id;
}

describe('request changes when the work would go back to a disabled principal (item 3)', () => {
  it('is 422 principal_disabled naming it, nothing written; once assigned to another, the work goes to that one', async () => {
    const gone = await t.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES] });
    const next = await t.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES] });
    const id = await handedIn(t, gone);
    await disable(gone);
    const before = await eventsOf(t, id);
    const problem = expectProblem(await review(id, { decision: 'request_changes', comment: 'Handle empty input.' }), 422, 'principal_disabled');
    expect(problem.principal).toEqual({ id: gone.id, kind: 'agent' });
    expect(problem.hint).toMatch(/tasks_assign/);
    expect(await eventsOf(t, id)).toHaveLength(before.length);
    expect(await full(id)).toMatchObject({ status: 'in_review', assignee: null, lease: null });
    // A plain status update back to in_progress would hand it to the same disabled holder: refused alike.
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { status: 'in_progress' } }), 422, 'principal_disabled');

    expect((await t.request('POST', `/api/v1/tasks/${id}/assign`, { body: { assignee: next.id } })).status).toBe(200);
    const res = await review(id, { decision: 'request_changes', comment: 'Handle empty input.' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>()).toMatchObject({ status: 'in_progress', assignee: { id: next.id }, lease: { holder: { id: next.id } } });
  });

  it('is refused when the assignee it would go back to is disabled', async () => {
    const gone = await t.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES] });
    const id = await handedIn(t, gone, { assignee: gone.id });
    await disable(gone);
    const problem = expectProblem(await review(id, { decision: 'request_changes', comment: 'Again, please.' }), 422, 'principal_disabled');
    expect(problem.principal).toEqual({ id: gone.id, kind: 'agent' });
    expect(await full(id)).toMatchObject({ status: 'in_review', assignee: { id: gone.id }, lease: null });
  });
});

describe('separation of duties (item 4)', () => {
  it('an agent reviewer cannot approve what it handed in, by review or by status update; another reviewer can', async () => {
    const selfReviewer = await t.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES, 'tasks:review'] });
    const id = await handedIn(t, selfReviewer);
    const problem = expectProblem(await review(id, { decision: 'approve' }, selfReviewer.token), 403, 'separation_of_duties');
    expect(problem.detail).toContain(selfReviewer.id);
    expect(problem.hint).toMatch(/another reviewer/);
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { status: 'done' }, token: selfReviewer.token }), 403, 'separation_of_duties');
    expect((await full(id)).status).toBe('in_review');
    // Requesting changes of its own work is not approving it.
    expect((await review(id, { decision: 'request_changes', comment: 'I missed a case.' }, selfReviewer.token)).status).toBe(200);
    const epoch = (await t.request('GET', `/api/v1/tasks/${id}`)).json<{ lease: { epoch: number } }>().lease.epoch;
    expect((await t.request('POST', `/api/v1/tasks/${id}/hand_in`, { body: { summary: 'Case handled.', lease_epoch: epoch }, token: selfReviewer.token })).status).toBe(200);
    expect((await review(id, { decision: 'approve' })).json<FullTask>().status).toBe('done');
  });

  it('holds for humans too: one who did the work, or handed in for an agent; and for the agent whose work a human handed in', async () => {
    const human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'tasks:review'] });
    const own = await handedIn(t, human);
    expectProblem(await review(own, { decision: 'approve' }, human.token), 403, 'separation_of_duties');
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${own}`, { body: { status: 'done' }, token: human.token }), 403, 'separation_of_duties');

    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES, 'tasks:review'] });
    const forAgent = await handedIn(t, agent, { handedInBy: human.token });
    expectProblem(await review(forAgent, { decision: 'approve' }, human.token), 403, 'separation_of_duties');
    expectProblem(await review(forAgent, { decision: 'approve' }, agent.token), 403, 'separation_of_duties');
    expect((await review(forAgent, { decision: 'approve' })).status).toBe(200);
  });

  it('is off where the deployment turns it off (BATON_SEPARATION_OF_DUTIES=off)', async () => {
    const solo = await startTestServer({ sweepIntervalMs: 0, separationOfDuties: false });
    try {
      const agent = await solo.addPrincipal({ kind: 'agent', scopes: [...WORKER_SCOPES, 'tasks:review'] });
      const id = await handedIn(solo, agent);
      const res = await solo.request('POST', `/api/v1/tasks/${id}/review`, { body: { decision: 'approve' }, token: agent.token });
      expect(res.status, res.body).toBe(200);
    } finally {
      await solo.close();
    }
  });
});
