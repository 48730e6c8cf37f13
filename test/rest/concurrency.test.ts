import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem, type TaskBody, taskRow } from './fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

const patch = (id: string, body: Record<string, unknown>, ifMatch?: string) =>
  t.request('PATCH', `/api/v1/tasks/${id}`, { body, ...(ifMatch === undefined ? {} : { ifMatch }) });

describe('optimistic concurrency with If-Match', () => {
  it('20 concurrent PATCHes with the same If-Match: exactly one wins, 19 get 409 conflict_version', async () => {
    const task = await createTask(t, { title: 'contended' });
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => patch(task.id, { title: `writer ${i}` }, '"1"')));

    const winners = results.filter((r) => r.status === 200);
    expect(winners).toHaveLength(1);
    const losers = results.filter((r) => r.status !== 200);
    expect(losers).toHaveLength(19);
    for (const res of losers) {
      const problem = expectProblem(res, 409, 'conflict_version');
      expect(problem.current_version).toBe(2);
      expect(problem.retryable).toBe(true);
      expect(res.headers.etag).toBe('"2"');
    }

    const won = winners[0]?.json<TaskBody>();
    expect(won?.version).toBe(2);
    const row = await taskRow(t, task.id);
    expect(row.version).toBe(2);
    expect(row.title).toBe(won?.title);
    const updates = (await eventsOf(t, task.id)).filter((e) => e.type === 'task.updated');
    expect(updates).toHaveLength(1);
    expect(updates[0]?.data).toEqual({ changes: { title: { from: 'contended', to: won?.title } } });
  });

  it('a stale If-Match is 409 conflict_version carrying the current version and its ETag; nothing is written', async () => {
    const task = await createTask(t);
    expect((await patch(task.id, { title: 'second' }, '"1"')).status).toBe(200);
    const eventsBefore = await eventsOf(t, task.id);

    const res = await patch(task.id, { title: 'stale write' }, '"1"');
    const problem = expectProblem(res, 409, 'conflict_version');
    expect(problem.current_version).toBe(2);
    expect(res.headers.etag).toBe('"2"');
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'second', version: 2 });
    expect(await eventsOf(t, task.id)).toHaveLength(eventsBefore.length);

    // Following the hint (re-read, retry with the new ETag) succeeds.
    const retried = await patch(task.id, { title: 'fresh write' }, res.headers.etag as string);
    expect(retried.status, retried.body).toBe(200);
    expect(retried.headers.etag).toBe('"3"');
  });

  it('a weak tag never matches, even naming the current version', async () => {
    const task = await createTask(t);
    const problem = expectProblem(await patch(task.id, { title: 'weak' }, 'W/"1"'), 409, 'conflict_version');
    expect(problem.current_version).toBe(1);
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'a task', version: 1 });
  });

  it.each(['1', 'abc', '"1', '"1" junk'])('a malformed If-Match (%s) is 400 invalid_precondition; nothing is written', async (header) => {
    const task = await createTask(t);
    expectProblem(await patch(task.id, { title: 'malformed' }, header), 400, 'invalid_precondition');
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'a task', version: 1 });
    expect(await eventsOf(t, task.id)).toHaveLength(1);
  });

  it('the matching strong tag, `*`, and no If-Match all write', async () => {
    const task = await createTask(t);
    const matching = await patch(task.id, { title: 'one' }, '"1"');
    expect(matching.status, matching.body).toBe(200);
    expect(matching.headers.etag).toBe('"2"');
    const star = await patch(task.id, { title: 'two' }, '*');
    expect(star.status, star.body).toBe(200);
    const none = await patch(task.id, { title: 'three' });
    expect(none.status, none.body).toBe(200);
    expect(await taskRow(t, task.id)).toMatchObject({ title: 'three', version: 4 });
  });
});

describe('conditional reads with If-None-Match', () => {
  it('the current ETag gives 304 with no body; a stale one gives 200 with the task', async () => {
    const task = await createTask(t);
    const read = await t.request('GET', `/api/v1/tasks/${task.id}`);
    expect(read.status).toBe(200);
    expect(read.headers.etag).toBe('"1"');

    const cached = await t.request('GET', `/api/v1/tasks/${task.id}`, { headers: { 'if-none-match': '"1"' } });
    expect(cached.status).toBe(304);
    expect(cached.body).toBe('');
    expect(cached.headers.etag).toBe('"1"');

    expect((await patch(task.id, { title: 'changed' })).status).toBe(200);
    const stale = await t.request('GET', `/api/v1/tasks/${task.id}`, { headers: { 'if-none-match': '"1"' } });
    expect(stale.status).toBe(200);
    expect(stale.headers.etag).toBe('"2"');
    expect(stale.json<TaskBody>()).toMatchObject({ title: 'changed', version: 2 });
  });
});
