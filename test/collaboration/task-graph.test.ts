import type { Client } from '@modelcontextprotocol/client';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../graphql/client.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf, problemOf } from '../mcp/clients.ts';
import { createTask, expectProblem, setTaskState, type TaskBody } from '../rest/fixtures.ts';

let t: TestServer;
let agent: Principal;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer();
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  mcp = await connectV2(await listen(t), agent.token, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const patch = (id: string, body: Record<string, unknown>) => t.request('PATCH', `/api/v1/tasks/${id}`, { body });
const read = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<TaskBody & { blocked_by: string[] }>();

/** `count` new tasks, each blocked by the one before (the first by `first`, when given): the last ends a chain. */
async function chain(count: number, first?: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const before = ids.at(-1) ?? first;
    ids.push((await createTask(t, { title: `link ${i}`, blocked_by: before ? [before] : [] })).id);
  }
  return ids;
}

/** Test setup, not behaviour under test: `count` copies of the task's first subtask, by SQL (200 creates are slow on PGlite). */
async function copyTask(parentId: string, count: number): Promise<void> {
  await sql`
    INSERT INTO tasks SELECT (jsonb_populate_record(t, jsonb_build_object('id', 'tsk_' || lpad(n::text || ${String(Date.now())}, 26, '0')))).*
    FROM tasks t, generate_series(1, ${count}) AS n WHERE t.parent_id = ${parentId} AND t.title = 'sub 0'`.execute(t.database.db);
}

describe('blocked_by cycles', () => {
  it('refuses an edge that closes a cycle, naming it; nothing is written', async () => {
    // a ← b ← c: b waits on a, c waits on b.
    const [a, b, c] = await chain(3);
    const before = await read(a!);
    const ring = expectProblem(await patch(a!, { blocked_by: [c] }), 422, 'blocked_by_cycle');
    expect(ring).toMatchObject({ cycle: [a, c, b, a], retryable: false, errors: [{ pointer: '/blocked_by/0', location: 'body' }] });
    expect(ring.hint).toContain('cycle');
    expect(ring.detail).toContain(`${a} → ${c} → ${b} → ${a}`);
    const after = await read(a!);
    expect([after.blocked_by, after.version]).toEqual([[], before.version]);

    // The shortest cycle is named; the pointer is at the entry that closes it.
    const other = await createTask(t);
    const direct = expectProblem(await patch(a!, { blocked_by: [other.id, b] }), 422, 'blocked_by_cycle');
    expect(direct).toMatchObject({ cycle: [a, b, a], errors: [{ pointer: '/blocked_by/1' }] });
  });

  it('counts every live task, done or not: a cycle through done work is still refused', async () => {
    const [a, b] = await chain(2);
    await setTaskState(t, a!, 'done');
    await setTaskState(t, b!, 'done');
    expect(expectProblem(await patch(a!, { blocked_by: [b] }), 422, 'blocked_by_cycle').cycle).toEqual([a, b, a]);
  });

  it('allows diamonds, keeping and dropping edges, and edges once a deleted task broke the cycle', async () => {
    const [a, b] = await chain(2);
    const c = (await createTask(t, { blocked_by: [a] })).id;
    const d = (await createTask(t, { blocked_by: [b, c] })).id;
    // d waits on a two ways; e waiting on d and a is a diamond, not a cycle.
    expect((await t.request('POST', '/api/v1/tasks', { body: { title: 'e', blocked_by: [d, a] } })).status).toBe(201);
    // Keeping the edges d has, or dropping one, checks nothing.
    expect((await patch(d, { blocked_by: [b, c] })).status).toBe(200);
    expect((await patch(d, { blocked_by: [c] })).status).toBe(200);
    // a waiting on d closes a → d → c → a; once c is deleted (its edges no longer count) it does not.
    expectProblem(await patch(a!, { blocked_by: [d] }), 422, 'blocked_by_cycle');
    await t.database.db.updateTable('tasks').set({ deleted_at: new Date() }).where('id', '=', c).execute();
    expect((await patch(a!, { blocked_by: [d] })).status).toBe(200);
  });
});

describe('bounds', () => {
  it('a chain of blockers is at most 32 tasks long, counting what waits on the task', async () => {
    const long = await chain(32);
    const past = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'link 33', blocked_by: [long.at(-1)] } }), 422, 'blocked_by_too_deep');
    expect(past).toMatchObject({ limit: 32, found: 33, errors: [{ pointer: '/blocked_by' }] });
    // A task may wait on an early link: the chain through it stays short.
    expect((await t.request('POST', '/api/v1/tasks', { body: { title: 'side', blocked_by: [long[5]] } })).status).toBe(201);

    // Joining two chains counts both: 16 below, the task and 15 above it make 32.
    const lower = await chain(16);
    const upper = await chain(16);
    expect((await patch(upper[0]!, { blocked_by: [lower.at(-1)] })).status).toBe(200);
    // Now lower[0] has 31 tasks waiting on it: one blocker more below it is 33.
    const root = await createTask(t);
    expect(expectProblem(await patch(lower[0]!, { blocked_by: [root.id] }), 422, 'blocked_by_too_deep')).toMatchObject({ limit: 32, found: 33 });
  });

  it('a task has at most 200 live subtasks; a deleted one frees its place', async () => {
    const parent = await createTask(t, { title: 'epic' });
    await createTask(t, { title: 'sub 0', parent_id: parent.id });
    await copyTask(parent.id, 199);
    const full = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'sub 201', parent_id: parent.id } }), 422, 'too_many_subtasks');
    expect(full).toMatchObject({ limit: 200, found: 201, errors: [{ pointer: '/parent_id' }] });
    const loose = await createTask(t);
    expectProblem(await patch(loose.id, { parent_id: parent.id }), 422, 'too_many_subtasks');
    const [one] = await t.database.db.selectFrom('tasks').select('id').where('parent_id', '=', parent.id).limit(1).execute();
    await t.database.db.updateTable('tasks').set({ deleted_at: new Date() }).where('id', '=', one!.id).execute();
    expect((await patch(loose.id, { parent_id: parent.id })).status).toBe(200);
  });

  it('a parent cycle is named the same way: each task the child of the next', async () => {
    const root = await createTask(t);
    const child = await createTask(t, { parent_id: root.id });
    const grandchild = await createTask(t, { parent_id: child.id });
    const cycle = expectProblem(await patch(root.id, { parent_id: grandchild.id }), 422, 'parent_cycle');
    expect(cycle).toMatchObject({ cycle: [root.id, grandchild.id, child.id, root.id], ancestors: [grandchild.id, child.id, root.id] });
  });
});

describe('over MCP and GraphQL', () => {
  it('an agent is refused a cycle over MCP with the same problem', async () => {
    const a = outputOf<{ id: string }>(await mcp.callTool({ name: 'tasks_create', arguments: { title: 'mcp a', idempotency_key: 'graph-mcp-a' } }));
    const b = outputOf<{ id: string }>(await mcp.callTool({ name: 'tasks_create', arguments: { title: 'mcp b', blocked_by: [a.id], idempotency_key: 'graph-mcp-b' } }));
    const refused = problemOf(await mcp.callTool({ name: 'tasks_update', arguments: { id: a.id, blocked_by: [b.id], idempotency_key: 'graph-mcp-cycle' } }));
    expect(refused).toMatchObject({ code: 'blocked_by_cycle', status: 422, cycle: [a.id, b.id, a.id] });
  });

  it('GraphQL carries the cycle in the error extensions', async () => {
    const [a, b] = await chain(2);
    const res = await graphql(t, 'mutation ($id: ID!, $by: [String!]) { updateTask(id: $id, blocked_by: $by) { id } }', { variables: { id: a, by: [b] } });
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'blocked_by_cycle', cycle: [a, b, a] });
  });
});
