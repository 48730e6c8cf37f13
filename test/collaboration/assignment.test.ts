import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';

interface Claimed {
  task: { id: string };
  lease: { id: string; epoch: number };
}
interface FullTask {
  id: string;
  status: string;
  version: number;
  assignee: { id: string; kind: string } | null;
  lease: { holder: { id: string } } | null;
}

let t: TestServer;
let alice: Principal;
let bob: Principal;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  const scopes = ['tasks:read', 'tasks:write', 'tasks:claim'] as const;
  alice = await t.addPrincipal({ kind: 'agent', scopes: [...scopes], name: 'alice' });
  bob = await t.addPrincipal({ kind: 'agent', scopes: [...scopes], name: 'bob' });
});
afterAll(() => t.close());

const claimNext = (token: string, labels: string[]) => t.request('POST', '/api/v1/tasks/claim', { body: { labels }, token });
const full = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<FullTask>();
const assign = (id: string, body: Record<string, unknown>, token?: string) => t.request('POST', `/api/v1/tasks/${id}/assign`, { body, ...(token ? { token } : {}) });

describe('claims respect the assignee', () => {
  it('claim_next hands an assigned task only to its assignee; unassigned work goes to anyone', async () => {
    const mine = await createTask(t, { title: 'for alice', labels: ['lane-a'], priority: 'urgent', assignee: alice.id });
    const open = await createTask(t, { title: 'for anyone', labels: ['lane-a'] });
    const bobs = (await claimNext(bob.token, ['lane-a'])).json<{ claims: Claimed[] }>();
    expect(bobs.claims.map((c) => c.task.id)).toEqual([open.id]);
    const alices = (await claimNext(alice.token, ['lane-a'])).json<{ claims: Claimed[] }>();
    expect(alices.claims.map((c) => c.task.id)).toEqual([mine.id]);
    expect((await full(mine.id)).assignee).toEqual({ id: alice.id, kind: 'agent' });
    expect((await eventsOf(t, mine.id)).map((e) => e.type).slice(0, 2)).toEqual(['task.created', 'task.assigned']);
  });

  it('claiming a task assigned to someone else by id is 409 assigned_to_other naming the assignee', async () => {
    const task = await createTask(t, { assignee: alice.id });
    const problem = expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: bob.token }), 409, 'assigned_to_other');
    expect(problem.assignee).toEqual({ id: alice.id, kind: 'agent' });
    expect(problem.detail).toContain(alice.id);
    expect((await full(task.id)).status).toBe('todo');
  });
});

describe('tasks_assign', () => {
  it('assigns and unassigns, each change a task.assigned event, with an optional comment in the same request', async () => {
    const task = await createTask(t);
    const res = await assign(task.id, { assignee: bob.id, comment: '@bob this one is yours' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>()).toMatchObject({ assignee: { id: bob.id, kind: 'agent' }, version: 2 });
    expect((await assign(task.id, { assignee: null })).json<FullTask>().assignee).toBeNull();
    const events = await eventsOf(t, task.id);
    expect(events.map((e) => e.type)).toEqual(['task.created', 'comment.created', 'task.assigned', 'task.assigned']);
    expect(events[2]?.data).toEqual({ from: null, to: { id: bob.id, kind: 'agent' } });
    expect(events[3]?.data).toEqual({ from: { id: bob.id, kind: 'agent' }, to: null });
    expect((await eventsOf(t, bob.id)).some((e) => e.type === 'comment.mentioned')).toBe(true);
  });

  it('refuses an unknown principal (422 unknown_principal) and a disabled one (422 principal_disabled)', async () => {
    const task = await createTask(t);
    const unknown = expectProblem(await assign(task.id, { assignee: 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV' }), 422, 'unknown_principal');
    expect(unknown.errors).toEqual([expect.objectContaining({ pointer: '/assignee' })]);
    const gone = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:claim'] });
    expect((await t.request('PATCH', `/api/v1/agents/${gone.id}`, { body: { disabled: true } })).status).toBe(200);
    expectProblem(await assign(task.id, { assignee: gone.id }), 422, 'principal_disabled');
    expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'x', assignee: gone.id } }), 422, 'principal_disabled');
    expect((await full(task.id)).version).toBe(1);
  });

  it('refuses to reassign a task someone else holds (409 assignee_lease_held) unless release_lease ends that lease', async () => {
    const task = await createTask(t);
    const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: alice.token })).json<Claimed>();
    const problem = expectProblem(await assign(task.id, { assignee: bob.id }), 409, 'assignee_lease_held');
    expect(problem.holder).toEqual({ id: alice.id, kind: 'agent' });
    // Assigning the holder itself needs no release.
    expect((await assign(task.id, { assignee: alice.id }, alice.token)).status).toBe(200);
    const res = await assign(task.id, { assignee: bob.id, release_lease: true });
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>()).toMatchObject({ status: 'todo', lease: null, assignee: { id: bob.id } });
    const lease = (await t.request('GET', `/api/v1/leases/${claim.lease.id}`)).json<{ state: string }>();
    expect(lease.state).toBe('released');
    const types = (await eventsOf(t, task.id)).map((e) => e.type);
    expect(types.slice(-3)).toEqual(['lease.released', 'task.status_changed', 'task.assigned']);
    expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: alice.token }), 409, 'assigned_to_other');
  });
});

describe('between agents (issue 36 item 1: assignment between agents was advisory)', () => {
  const claim = (id: string, token: string) => t.request('POST', `/api/v1/tasks/${id}/claim`, { body: {}, token });

  it("an agent cannot end another's lease: 403 not_your_task, with or without release_lease; the holder keeps it and hands in", async () => {
    const task = await createTask(t);
    const held = (await claim(task.id, alice.token)).json<Claimed>();
    for (const body of [{ assignee: bob.id, release_lease: true }, { assignee: bob.id }, { assignee: bob.id, release_lease: true, comment: 'mine now' }]) {
      const problem = expectProblem(await assign(task.id, body, bob.token), 403, 'not_your_task');
      expect(problem.holder).toEqual({ id: alice.id, kind: 'agent' });
      expect(problem.hint).toMatch(/ask a human/);
    }
    // No other route ends it either: releasing it by id, or moving the task, is the holder's.
    expectProblem(await t.request('POST', `/api/v1/leases/${held.lease.id}/release`, { body: {}, token: bob.token }), 403, 'not_lease_holder');
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'blocked' }, token: bob.token }), 403, 'not_lease_holder');
    expect(await full(task.id)).toMatchObject({ status: 'in_progress', assignee: null, lease: { holder: { id: alice.id } }, version: 2 });
    const handIn = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Done.', lease_epoch: held.lease.epoch }, token: alice.token });
    expect(handIn.status, handIn.body).toBe(200);
  });

  it('an agent cannot take, hand on or drop a task assigned to another: 403 not_your_task naming the assignee, nothing written', async () => {
    const task = await createTask(t, { assignee: alice.id });
    const before = (await eventsOf(t, task.id)).length;
    for (const assignee of [bob.id, null]) {
      const problem = expectProblem(await assign(task.id, { assignee, comment: 'taking this' }, bob.token), 403, 'not_your_task');
      expect(problem.assignee).toEqual({ id: alice.id, kind: 'agent' });
    }
    expect(await eventsOf(t, task.id)).toHaveLength(before);
    expect((await full(task.id)).assignee).toEqual({ id: alice.id, kind: 'agent' });
    // Naming the current assignee again changes nothing, so it is not taking: the comment is posted.
    expect((await assign(task.id, { assignee: alice.id, comment: '@alice ping' }, bob.token)).status).toBe(200);
  });

  it('an agent assigns unassigned tasks and its own, and unassigns itself', async () => {
    const open = await createTask(t);
    expect((await assign(open.id, { assignee: bob.id }, bob.token)).json<FullTask>().assignee).toEqual({ id: bob.id, kind: 'agent' });
    expect((await assign(open.id, { assignee: alice.id }, bob.token)).json<FullTask>().assignee).toEqual({ id: alice.id, kind: 'agent' });
    expect((await assign(open.id, { assignee: null }, alice.token)).json<FullTask>().assignee).toBeNull();
    const other = await createTask(t);
    expect((await assign(other.id, { assignee: alice.id }, alice.token)).status).toBe(200);
    // Its own held task goes to another with its own lease ended.
    await claim(other.id, alice.token);
    const handed = await assign(other.id, { assignee: bob.id, release_lease: true }, alice.token);
    expect(handed.status, handed.body).toBe(200);
    expect(handed.json<FullTask>()).toMatchObject({ status: 'todo', lease: null, assignee: { id: bob.id } });
  });

  it('a holder of agents:admin, like a human, may take another agent\'s task', async () => {
    const admin = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'agents:admin'], name: 'fleet-admin' });
    const task = await createTask(t, { assignee: alice.id });
    await claim(task.id, alice.token);
    const res = await assign(task.id, { assignee: admin.id, release_lease: true }, admin.token);
    expect(res.status, res.body).toBe(200);
    expect(res.json<FullTask>()).toMatchObject({ status: 'todo', lease: null, assignee: { id: admin.id } });
  });
});

describe('filters and whoami', () => {
  it('lists assignee=me, assignee=<id> and assignee=none; whoami counts what is assigned to the caller by status', async () => {
    const carol = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'], name: 'carol' });
    const a = await createTask(t, { title: 'c1', assignee: carol.id });
    const b = await createTask(t, { title: 'c2', assignee: carol.id });
    await t.request('POST', `/api/v1/tasks/${b.id}/claim`, { body: {}, token: carol.token });
    const mine = (await t.request('GET', '/api/v1/tasks?assignee=me', { token: carol.token })).json<{ data: { id: string }[] }>();
    expect(mine.data.map((x) => x.id)).toEqual([b.id, a.id]);
    const byId = (await t.request('GET', `/api/v1/tasks?assignee=${carol.id}&status=todo`)).json<{ data: { id: string }[] }>();
    expect(byId.data.map((x) => x.id)).toEqual([a.id]);
    const none = (await t.request('GET', '/api/v1/tasks?assignee=none&limit=100&view=full')).json<{ data: FullTask[] }>();
    expect(none.data.every((x) => x.assignee === null)).toBe(true);
    expect(none.data.map((x) => x.id)).not.toContain(a.id);
    const who = (await t.request('GET', '/api/v1/whoami', { token: carol.token })).json<{ assigned: Record<string, number> }>();
    expect(who.assigned).toEqual({ todo: 1, in_progress: 1, in_review: 0, blocked: 0, done: 0, cancelled: 0 });
    expectProblem(await t.request('GET', '/api/v1/tasks?assignee=carol'), 400, 'invalid_parameter');
  });
});
