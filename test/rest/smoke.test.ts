import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('tasks over REST', () => {
  it('creates, reads and lists a task', async () => {
    const created = await t.request('POST', '/api/v1/tasks', { body: { title: 'Write the README' } });
    expect(created.status).toBe(201);
    const task = created.json<{ id: string; status: string; version: number }>();
    expect(task.status).toBe('todo');
    expect(created.headers.etag).toBe('"1"');
    const read = await t.request('GET', `/api/v1/tasks/${task.id}`);
    expect(read.status).toBe(200);
    expect(read.json()).toMatchObject({ id: task.id, title: 'Write the README' });
    const list = await t.request('GET', '/api/v1/tasks');
    expect(list.json<{ data: unknown[] }>().data).toHaveLength(1);
  });
});
