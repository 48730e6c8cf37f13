import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { countRows, createTask, eventsOf, expectProblem, taskRow } from './fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  // The injected fault: refuses one event insert, after the task row was written in the same transaction.
  await t.database.runScript(`
    CREATE FUNCTION test_inject_fault() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'injected fault SECRET-DETAIL-7f3a';
    END
    $$;`);
});
afterAll(() => t.close());
afterEach(async () => {
  await t.database.runScript('DROP TRIGGER IF EXISTS test_fault ON events;');
});

async function injectFault(when: string): Promise<void> {
  await t.database.runScript(`CREATE TRIGGER test_fault BEFORE INSERT ON events FOR EACH ROW WHEN (${when}) EXECUTE FUNCTION test_inject_fault();`);
}

/** A 500 is a problem document like any other, with a request id and nothing of the underlying error. */
function expectInternal(res: Awaited<ReturnType<TestServer['request']>>): void {
  const problem = expectProblem(res, 500, 'internal');
  expect(problem.retryable).toBe(true);
  expect(typeof problem.request_id).toBe('string');
  expect(problem.request_id).toBe(res.headers['x-request-id']);
  expect(res.body).not.toContain('SECRET-DETAIL');
  expect(res.body).not.toMatch(/injected fault|plpgsql|\bat .+:\d+:\d+|\.ts\b|stack/i);
}

describe('a fault between the task write and its event leaves neither', () => {
  it('POST /tasks: 500 internal, no task row, no event, and the key is not used up', async () => {
    await injectFault(`NEW.data->>'title' = 'boom'`);
    const before = await countRows(t);
    const key = randomUUID();

    const res = await t.request('POST', '/api/v1/tasks', { key, body: { title: 'boom' } });
    expectInternal(res);
    expect(await countRows(t)).toEqual(before);
    expect(await t.database.db.selectFrom('tasks').select('id').where('title', '=', 'boom').execute()).toEqual([]);

    // internal is retryable: once the fault is gone, the same key goes through.
    await t.database.runScript('DROP TRIGGER test_fault ON events;');
    const retried = await t.request('POST', '/api/v1/tasks', { key, body: { title: 'boom' } });
    expect(retried.status, retried.body).toBe(201);
    expect(retried.headers['idempotency-replayed']).toBeUndefined();
    expect(await countRows(t)).toMatchObject({ tasks: before.tasks + 1, events: before.events + 1 });
  });

  it('PATCH /tasks/{id}: 500 internal, the task keeps its fields and version, no event', async () => {
    const task = await createTask(t, { title: 'steady' });
    const untouched = await createTask(t, { title: 'bystander' });
    await injectFault(`NEW.type = 'task.updated' AND NEW.subject = '${task.id}'`);
    const rowBefore = await taskRow(t, task.id);
    const before = await countRows(t);

    expectInternal(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'changed', priority: 'urgent' }, ifMatch: '"1"' }));
    expect(await taskRow(t, task.id)).toEqual(rowBefore);
    expect(await countRows(t)).toEqual(before);
    expect(await eventsOf(t, task.id)).toHaveLength(1);

    // The fault is scoped to that task: others still write.
    const other = await t.request('PATCH', `/api/v1/tasks/${untouched.id}`, { body: { title: 'moved on' } });
    expect(other.status, other.body).toBe(200);
  });

  it('a status change whose event fails leaves the status unchanged', async () => {
    const task = await createTask(t);
    await injectFault(`NEW.type = 'task.status_changed' AND NEW.subject = '${task.id}'`);
    const rowBefore = await taskRow(t, task.id);
    expectInternal(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'blocked' } }));
    expect(await taskRow(t, task.id)).toEqual(rowBefore);
    expect(rowBefore).toMatchObject({ status: 'todo', version: 1 });
  });
});

describe('events are append-only', () => {
  it('the database refuses UPDATE, DELETE and TRUNCATE on events', async () => {
    await createTask(t, { title: 'leaves an event' });
    const before = await t.database.db.selectFrom('events').selectAll().orderBy('seq').execute();
    expect(before.length).toBeGreaterThan(0);

    await expect(t.database.db.updateTable('events').set({ type: 'task.tampered' }).execute()).rejects.toThrow(/append-only/);
    await expect(t.database.db.deleteFrom('events').execute()).rejects.toThrow(/append-only/);
    await expect(sql`TRUNCATE events`.execute(t.database.db)).rejects.toThrow(/append-only/);
    expect(await t.database.db.selectFrom('events').selectAll().orderBy('seq').execute()).toEqual(before);
  });
});
