import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { countRows, createTask, eventsOf, expectProblem, setTaskState, type TaskBody, taskRow } from '../rest/fixtures.ts';

/** Archiving finished tasks through tasks_update (issue 43 §8; spec/collaboration.md#archive). */
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

interface Page {
  data: TaskBody[];
  sync_cursor: string | null;
}

const patch = (id: string, body: Record<string, unknown>, options: { ifMatch?: string; key?: string } = {}) => t.request('PATCH', `/api/v1/tasks/${id}`, { body, ...options });
const list = async (query = '') => {
  const res = await t.request('GET', `/api/v1/tasks?limit=100${query}`);
  expect(res.status, res.body).toBe(200);
  return res.json<Page>();
};
const ids = (page: Page) => page.data.map((task) => task.id);

/** A task made over HTTP, then put in `done` by setup SQL (the way there is not under test). */
async function doneTask(title: string): Promise<TaskBody> {
  const task = await createTask(t, { title, labels: ['archive-test'] });
  await setTaskState(t, task.id, 'done', 3);
  return { ...task, status: 'done', version: 3 };
}

describe('archiving a task', () => {
  it('archives a done task: it leaves lists and search, archived=only and any list it, a since delta carries it, and task.updated records it', async () => {
    const task = await doneTask('Archive me quietly');
    const other = await createTask(t, { title: 'Archive me not', labels: ['archive-test'] });
    const before = await list();
    expect(ids(before)).toContain(task.id);

    const res = await patch(task.id, { archived: true }, { ifMatch: '"3"' });
    expect(res.status, res.body).toBe(200);
    const archived = res.json<TaskBody>();
    expect(archived).toMatchObject({ id: task.id, status: 'done', version: 4 });
    expect(archived.archived_at).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
    expect(res.headers.etag).toBe('"4"');

    expect(ids(await list())).not.toContain(task.id);
    expect(ids(await list())).toContain(other.id);
    expect(ids(await list('&labels=archive-test&status=done'))).not.toContain(task.id);
    expect(ids(await list('&q=quietly'))).toEqual([]);
    expect(ids(await list('&archived=only'))).toEqual([task.id]);
    expect(ids(await list('&archived=only&q=quietly'))).toEqual([task.id]);
    const any = await list('&archived=any&labels=archive-test');
    expect(ids(any)).toEqual(expect.arrayContaining([task.id, other.id]));
    expect(any.data.find((item) => item.id === task.id)?.archived_at).toBe(archived.archived_at);
    // Not archived: no member (a list item carries it only where set).
    expect(any.data.find((item) => item.id === other.id)).not.toHaveProperty('archived_at');

    // A delta since the read before carries the archived task, so a client's copy can drop it.
    const delta = await list(`&since=${before.sync_cursor}`);
    expect(delta.data.find((item) => item.id === task.id)?.archived_at).toBe(archived.archived_at);
    expect(ids(await list(`&since=${before.sync_cursor}&archived=only`))).toEqual([task.id]);

    const read = await t.request('GET', `/api/v1/tasks/${task.id}?view=full`);
    expect(read.json<TaskBody>().archived_at).toBe(archived.archived_at);
    const events = await eventsOf(t, task.id);
    expect(events.at(-1)).toMatchObject({ type: 'task.updated', data: { changes: { archived_at: { from: null, to: archived.archived_at } } } });
    const timeline = await t.request('GET', `/api/v1/tasks/${task.id}/events?order=desc&limit=1`);
    expect(timeline.json<{ data: { type: string; data: unknown }[] }>().data[0]).toMatchObject({ type: 'task.updated', data: { changes: { archived_at: { from: null } } } });
  });

  it('unarchives: the task is listed again, with another task.updated; archiving twice writes nothing', async () => {
    const task = await doneTask('Archive and back');
    const first = await patch(task.id, { archived: true });
    expect(first.status, first.body).toBe(200);
    const again = await patch(task.id, { archived: true });
    expect(again.json<TaskBody>().version).toBe(first.json<TaskBody>().version);
    expect(await eventsOf(t, task.id)).toHaveLength(2);

    const res = await patch(task.id, { archived: false }, { ifMatch: `"${first.json<TaskBody>().version}"` });
    expect(res.status, res.body).toBe(200);
    expect(res.json<TaskBody>()).not.toHaveProperty('archived_at');
    expect((await taskRow(t, task.id)).archived_at).toBeNull();
    expect(ids(await list())).toContain(task.id);
    const events = await eventsOf(t, task.id);
    expect(events).toHaveLength(3);
    expect(events.at(-1)).toMatchObject({ type: 'task.updated', data: { changes: { archived_at: { from: first.json<TaskBody>().archived_at, to: null } } } });
  });

  it('refuses an open task with 409 task_not_finished and writes nothing; cancelling and archiving in one request is allowed', async () => {
    const task = await createTask(t, { title: 'Still to do' });
    const rows = await countRows(t);
    const problem = expectProblem(await patch(task.id, { archived: true, title: 'renamed' }), 409, 'task_not_finished');
    expect(problem.detail).toContain('todo');
    expect(problem.hint).toMatch(/done or cancelled/);
    expect(problem.current_status).toBe('todo');
    // The refusal is remembered under its key; no task or event is written.
    expect(await countRows(t)).toMatchObject({ tasks: rows.tasks, events: rows.events });
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'Still to do', version: 1, archived_at: null });

    const res = await patch(task.id, { status: 'cancelled', archived: true });
    expect(res.status, res.body).toBe(200);
    expect(res.json<TaskBody>().status).toBe('cancelled');
    expect(res.json<TaskBody>().archived_at).toEqual(expect.any(String));
    const types = (await eventsOf(t, task.id)).map((e) => e.type);
    expect(types.slice(-2)).toEqual(['task.updated', 'task.status_changed']);
  });

  it('refuses a stale If-Match with 409 conflict_version and leaves the task as it was', async () => {
    const task = await doneTask('Changed meanwhile');
    expectProblem(await patch(task.id, { archived: true }, { ifMatch: '"2"' }), 409, 'conflict_version');
    expect((await taskRow(t, task.id)).archived_at).toBeNull();
    expect(await eventsOf(t, task.id)).toHaveLength(1);
  });

  it('answers a retry under the same Idempotency-Key from memory: one write, one event', async () => {
    const task = await doneTask('Retried archive');
    const first = await patch(task.id, { archived: true }, { key: 'archive-retry-1' });
    const retry = await patch(task.id, { archived: true }, { key: 'archive-retry-1' });
    expect(retry.status).toBe(200);
    expect(retry.body).toBe(first.body);
    expect(await eventsOf(t, task.id)).toHaveLength(2);
  });

  it('reopening an archived task unarchives it with the move, so an archived task is always finished', async () => {
    const task = await doneTask('Reopen me');
    await patch(task.id, { archived: true });
    const res = await patch(task.id, { status: 'todo' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<TaskBody>()).toMatchObject({ status: 'todo' });
    expect(res.json<TaskBody>()).not.toHaveProperty('archived_at');
    expect(ids(await list())).toContain(task.id);
    expect((await eventsOf(t, task.id)).at(-2)).toMatchObject({ type: 'task.updated', data: { changes: { archived_at: { to: null } } } });
    // Reopening and keeping it archived is a contradiction, refused.
    await setTaskState(t, task.id, 'done');
    expectProblem(await patch(task.id, { status: 'todo', archived: true }), 409, 'task_not_finished');
  });

  it('refuses an unknown archived filter, naming the values', async () => {
    const res = await t.request('GET', '/api/v1/tasks?archived=yes');
    expect(res.status).toBe(400);
    expect(res.body).toMatch(/only/);
  });
});
