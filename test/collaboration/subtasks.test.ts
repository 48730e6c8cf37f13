import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { graphql } from '../graphql/client.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf, problemOf } from '../mcp/clients.ts';
import { createTask, eventsOf, expectProblem, setTaskState } from '../rest/fixtures.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';

/** The server's clock, moved by the test: schedules and due dates without sleeping. */
let at = new Date('2026-11-25T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const advance = (seconds: number) => (at = new Date(at.getTime() + seconds * 1000));
const later = (seconds: number) => new Date(at.getTime() + seconds * 1000).toISOString();

interface FullTask {
  id: string;
  status: string;
  parent_id: string | null;
  children: Record<string, number>;
  not_before: string | null;
  due_at: string | null;
  overdue: boolean;
  version: number;
}

let t: TestServer;
let agent: Principal;
let baseUrl: string;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, { clock });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  baseUrl = await listen(t);
  mcp = await connectV2(baseUrl, agent.token, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const full = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<FullTask>();
const patch = (id: string, body: Record<string, unknown>, token?: string) => t.request('PATCH', `/api/v1/tasks/${id}`, { body, ...(token ? { token } : {}) });
const sweep = () => t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
const list = async (query: string) => (await t.request('GET', `/api/v1/tasks?${query}`)).json<{ data: (Partial<FullTask> & { id: string })[]; next_cursor: string | null }>();

describe('subtasks', () => {
  it('a parent counts its children by status; listing children is a filter; top-level is parent=none', async () => {
    const parent = await createTask(t, { title: 'epic' });
    const a = await createTask(t, { title: 'child a', parent_id: parent.id });
    const b = await createTask(t, { title: 'child b', parent_id: parent.id });
    await setTaskState(t, b.id, 'blocked');
    const grandchild = await createTask(t, { title: 'grandchild', parent_id: a.id });

    const read = await full(parent.id);
    expect(read.parent_id).toBeNull();
    expect(read.children).toEqual({ todo: 1, in_progress: 0, in_review: 0, blocked: 1, done: 0, cancelled: 0 });
    expect((await full(grandchild.id)).parent_id).toBe(a.id);

    const children = await list(`parent=${parent.id}`);
    expect(children.data.map((task) => task.id)).toEqual([b.id, a.id]);
    // A compact list item names its parent when it has one.
    expect(children.data[0]?.parent_id).toBe(parent.id);
    const top = await list('parent=none&limit=100');
    expect(top.data.map((task) => task.id)).toContain(parent.id);
    expect(top.data.map((task) => task.id)).not.toContain(a.id);
    expectProblem(await t.request('GET', '/api/v1/tasks?parent=nope'), 400, 'invalid_parameter');
  });

  it('refuses self-parenting, cycles, unknown parents and trees deeper than 8, each with its own problem', async () => {
    const root = await createTask(t);
    const child = await createTask(t, { parent_id: root.id });
    const grandchild = await createTask(t, { parent_id: child.id });

    const self = expectProblem(await patch(root.id, { parent_id: root.id }), 422, 'parent_self');
    expect(self.errors).toEqual([expect.objectContaining({ pointer: '/parent_id' })]);
    const cycle = expectProblem(await patch(root.id, { parent_id: grandchild.id }), 422, 'parent_cycle');
    expect(cycle.ancestors).toEqual([grandchild.id, child.id, root.id]);
    const unknown = expectProblem(await patch(root.id, { parent_id: 'tsk_01M877M07JHA1E0RG030VDB881' }), 400, 'validation_failed');
    expect(unknown.errors).toEqual([expect.objectContaining({ pointer: '/parent_id', detail: 'no such task' })]);
    const malformed = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'x', parent_id: 'not-a-task' } }), 400, 'validation_failed');
    expect(malformed.errors).toEqual([expect.objectContaining({ pointer: '/parent_id', detail: expect.stringContaining('parent_id') as string })]);

    // Eight levels are allowed; a ninth, or a subtree moved under a deep task, is refused.
    let deepest = await createTask(t);
    for (let level = 2; level <= 8; level++) deepest = await createTask(t, { parent_id: deepest.id });
    const tooDeep = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'level 9', parent_id: deepest.id } }), 422, 'parent_too_deep');
    expect(tooDeep).toMatchObject({ limit: 8, found: 9 });
    expectProblem(await patch(root.id, { parent_id: deepest.id }), 422, 'parent_too_deep');

    // Moving to another parent, and back to top level, is an update with its event.
    const moved = await patch(grandchild.id, { parent_id: root.id });
    expect(moved.status, moved.body).toBe(200);
    expect((await full(grandchild.id)).parent_id).toBe(root.id);
    expect((await patch(grandchild.id, { parent_id: null })).status).toBe(200);
    expect((await full(grandchild.id)).parent_id).toBeNull();
    const updates = (await eventsOf(t, grandchild.id)).filter((e) => e.type === 'task.updated').map((e) => e.data);
    expect(updates).toEqual([{ changes: { parent_id: { from: child.id, to: root.id } } }, { changes: { parent_id: { from: root.id, to: null } } }]);
  });

  it('a parent cannot be done while a subtask is open, unless the same request cancels them', async () => {
    const parent = await createTask(t);
    const open = await createTask(t, { parent_id: parent.id });
    const finished = await createTask(t, { parent_id: parent.id });
    const nested = await createTask(t, { parent_id: open.id });
    await setTaskState(t, finished.id, 'done');
    await setTaskState(t, parent.id, 'in_review');
    // A subtask in progress: its lease ends with the cancel.
    const claimed = await t.request('POST', `/api/v1/tasks/${nested.id}/claim`, { body: {}, token: agent.token });
    expect(claimed.status, claimed.body).toBe(200);

    const refused = expectProblem(await patch(parent.id, { status: 'done' }), 409, 'children_open');
    expect(refused.open_children).toEqual(expect.arrayContaining([
      { id: open.id, status: 'todo', parent_id: parent.id },
      { id: nested.id, status: 'in_progress', parent_id: open.id },
    ]));
    expect((await full(parent.id)).status).toBe('in_review');
    // Approval through review is refused the same way.
    expectProblem(await t.request('POST', `/api/v1/tasks/${parent.id}/review`, { body: { decision: 'approve' } }), 409, 'children_open');

    const alone = expectProblem(await patch(parent.id, { title: 'renamed', cancel_children: true }), 400, 'validation_failed');
    expect(alone.errors).toEqual([expect.objectContaining({ pointer: '/cancel_children' })]);
    const done = await patch(parent.id, { status: 'done', cancel_children: true });
    expect(done.status, done.body).toBe(200);
    expect((await full(parent.id)).children).toMatchObject({ done: 1, cancelled: 1, todo: 0 });
    expect((await full(nested.id)).status).toBe('cancelled');
    const nestedEvents = (await eventsOf(t, nested.id)).map((e) => e.type);
    expect(nestedEvents.slice(-2)).toEqual(['lease.released', 'task.status_changed']);
    expect((await eventsOf(t, open.id)).at(-1)?.data).toMatchObject({ to: 'cancelled', reason: 'parent_done', parent_id: parent.id });
  });
});

describe('scheduling', () => {
  it('not_before holds a task out of the queue until then; the claim says when', async () => {
    const task = await createTask(t, { labels: ['scheduled'], not_before: later(3600) });
    expect((await full(task.id)).not_before).toBe(later(3600));
    const refused = expectProblem(await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent.token }), 409, 'backoff_pending');
    expect(refused.not_before).toBe(later(3600));
    // It was scheduled, not failed: the detail says so.
    expect(refused.detail).toBe(`Task ${task.id} is scheduled: not claimable before ${later(3600)}.`);
    const empty = (await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['scheduled'] }, token: agent.token })).json<{ claims: unknown[]; next_claimable_at: string | null }>();
    expect(empty).toMatchObject({ claims: [], next_claimable_at: later(3600) });
    // A claim filter the scheduled task does not match is not told to come back for it.
    for (const filter of [{ labels: ['scheduled', 'elsewhere'] }, { labels: ['scheduled'], min_priority: 'high' }]) {
      const other = (await t.request('POST', '/api/v1/tasks/claim', { body: filter, token: agent.token })).json<{ claims: unknown[]; next_claimable_at: string | null }>();
      expect(other).toMatchObject({ claims: [], next_claimable_at: null });
    }
    advance(3600);
    const next = (await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['scheduled'] }, token: agent.token })).json<{ claims: { task: { id: string } }[] }>();
    expect(next.claims.map((c) => c.task.id)).toEqual([task.id]);
  });

  it('an overdue task is flagged in lists and gets one task.overdue event, from the maintenance pass', async () => {
    const task = await createTask(t, { labels: ['due'], due_at: later(60) });
    const fine = await createTask(t, { labels: ['due'], due_at: later(86_400) });
    expect((await list('labels=due')).data.find((x) => x.id === task.id)).toMatchObject({ due_at: later(60) });
    expect((await list('labels=due')).data.find((x) => x.id === task.id)?.overdue).toBeUndefined();
    advance(61);
    const flagged = await list('labels=due');
    expect(flagged.data.find((x) => x.id === task.id)?.overdue).toBe(true);
    expect(flagged.data.find((x) => x.id === fine.id)?.overdue).toBeUndefined();
    expect((await full(task.id)).overdue).toBe(true);

    expect((await sweep()).status).toBe(200);
    expect((await sweep()).status).toBe(200);
    const overdue = (await eventsOf(t, task.id)).filter((e) => e.type === 'task.overdue');
    expect(overdue).toHaveLength(1);
    expect(overdue[0]).toMatchObject({ actor_kind: 'system', data: { due_at: new Date(Date.parse(later(0)) - 1000).toISOString() } });
    expect((await eventsOf(t, fine.id)).filter((e) => e.type === 'task.overdue')).toHaveLength(0);

    // A new due date gets its own event when it passes; a done task is never overdue.
    expect((await patch(task.id, { due_at: later(10) })).status).toBe(200);
    advance(11);
    await sweep();
    expect((await eventsOf(t, task.id)).filter((e) => e.type === 'task.overdue')).toHaveLength(2);
    await setTaskState(t, task.id, 'done');
    expect((await full(task.id)).overdue).toBe(false);
  });

  it('times are validated and named: RFC 3339 with a zone, years 2000 to 2999', async () => {
    for (const [field, value] of [['not_before', 'tomorrow'], ['due_at', '2026-12-01T09:00:00'], ['due_at', '3026-12-01T09:00:00Z'], ['not_before', '2026-13-45T09:00:00Z']] as const) {
      const problem = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'x', [field]: value } }), 400, 'validation_failed');
      expect(problem.errors, `${field}=${value}`).toEqual([expect.objectContaining({ pointer: `/${field}`, detail: expect.stringContaining(field) as string })]);
    }
    const task = await createTask(t, { due_at: '2026-12-01T10:00:00+01:00' });
    expect((await full(task.id)).due_at).toBe('2026-12-01T09:00:00.000Z');
    expect((await patch(task.id, { due_at: null })).status).toBe(200);
    expect((await full(task.id)).due_at).toBeNull();
  });
});

describe('over MCP and GraphQL', () => {
  it('an agent creates a subtask with a due date over MCP, lists the children, and is refused a cycle', async () => {
    const parent = outputOf<{ id: string }>(await mcp.callTool({ name: 'tasks_create', arguments: { title: 'mcp parent', idempotency_key: 'mcp-parent-1' } }));
    const child = outputOf<{ id: string }>(await mcp.callTool({ name: 'tasks_create', arguments: { title: 'mcp child', parent_id: parent.id, due_at: later(600), idempotency_key: 'mcp-child-1' } }));
    const children = outputOf<{ data: { id: string; parent_id: string }[] }>(await mcp.callTool({ name: 'tasks_list', arguments: { parent: parent.id } }));
    expect(children.data).toEqual([expect.objectContaining({ id: child.id, parent_id: parent.id, due_at: later(600) })]);
    expect(problemOf(await mcp.callTool({ name: 'tasks_update', arguments: { id: parent.id, parent_id: child.id, idempotency_key: 'mcp-cycle-1' } }))).toMatchObject({ code: 'parent_cycle', status: 422 });
  });

  it('GraphQL reads a parent with its children counts and lists its subtasks', async () => {
    const parent = await createTask(t, { title: 'gql parent' });
    const child = await createTask(t, { title: 'gql child', parent_id: parent.id });
    const res = await graphql<{ task: { children: { todo: number; done: number } }; tasks: { data: { id: string; parent_id: string }[] } }>(
      t,
      'query ($id: ID!, $parent: String) { task(id: $id) { children { todo done } } tasks(parent: $parent) { data { id parent_id } } }',
      { variables: { id: parent.id, parent: parent.id } },
    );
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(res.data).toEqual({ task: { children: { todo: 1, done: 0 } }, tasks: { data: [{ id: child.id, parent_id: parent.id }] } });
  });

  it('GraphQL schedules a task (not_before, due_at) and reads it back overdue once its due date passes', async () => {
    const made = await graphql<{ createTask: { id: string } }>(t, 'mutation ($due: String, $nb: String) { createTask(title: "gql scheduled", due_at: $due, not_before: $nb) { id } }', {
      variables: { due: later(30), nb: later(10) },
    });
    expect(made.errors, JSON.stringify(made.errors)).toBeUndefined();
    const id = made.data?.createTask.id ?? '';
    const due = later(30);
    advance(31);
    const read = await graphql<{ task: { due_at: string; overdue: boolean; not_before: string } }>(t, 'query ($id: ID!) { task(id: $id) { due_at overdue not_before } }', { variables: { id } });
    expect(read.errors, JSON.stringify(read.errors)).toBeUndefined();
    expect(read.data?.task).toMatchObject({ due_at: due, overdue: true });
    const bad = await graphql(t, 'mutation { createTask(title: "x", due_at: "soon") { id } }');
    expect(bad.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed' });
  });
});
