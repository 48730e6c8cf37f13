import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from './client.ts';

const statements: string[] = [];
let t: TestServer;
beforeAll(async () => {
  // No background loops (lease sweeper, webhook delivery): their statements would land in the count.
  t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 }, { onQuery: (sql) => statements.push(sql) });
  for (let i = 0; i < 50; i++) {
    const res = await t.request('POST', '/api/v1/tasks', { body: { title: `task ${i}` } });
    expect(res.status).toBe(201);
    if (i % 10 === 0) await t.request('PATCH', `/api/v1/tasks/${res.json<{ id: string }>().id}`, { body: { title: `task ${i}, renamed` } });
  }
});
afterAll(() => t.close());

interface Page {
  tasks: { data: { id: string; title: string; events: { data: { id: string; type: string }[] } }[] };
}

/** The SQL statements one GraphQL request sends, less the at-most-once-a-minute `last_used_at` touch of the token. */
async function countQueries(limit: number): Promise<{ count: number; page: Page }> {
  statements.length = 0;
  const res = await graphql<Page>(t, `{ tasks(limit: ${limit}) { data { id title events { data { id type } } } } }`);
  expect(res.errors).toBeUndefined();
  const count = statements.filter((sql) => !/last_used_at/.test(sql)).length;
  return { count, page: res.data as Page };
}

describe('tasks with their events (the N+1 shape)', () => {
  it('runs the same fixed number of SQL statements for 5 tasks as for 50', async () => {
    const few = await countQueries(5);
    const many = await countQueries(50);
    expect(many.page.tasks.data).toHaveLength(50);
    expect(few.page.tasks.data).toHaveLength(5);
    // Authentication (1), the page of tasks (its workspace's binding, sync cursor, rows: 3), every
    // task's events (binding, which exist, sync cursor, rows: 4); on PostgreSQL the listener also
    // hears each of the two reads' BEGIN and COMMIT (4).
    expect(many.count).toBe(few.count);
    expect(many.count).toBeLessThanOrEqual(12);
  });

  it('gives each task the same events REST gives it', async () => {
    const { page } = await countQueries(50);
    for (const task of [page.tasks.data[0], page.tasks.data[9], page.tasks.data[49]]) {
      const rest = await t.request('GET', `/api/v1/tasks/${task?.id}/events?fields=id,type`);
      // REST adds the event's core fields (subject, created_at) to any selection; GraphQL gives what was selected.
      expect(task?.events).toEqual({ data: rest.json<{ data: { id: string; type: string }[] }>().data.map(({ id, type }) => ({ id, type })) });
    }
    const renamed = page.tasks.data.filter((task) => task.title.endsWith('renamed'));
    expect(renamed).toHaveLength(5);
    for (const task of renamed) expect(task.events.data.map((e) => e.type)).toEqual(['task.created', 'task.updated']);
  });

  it('keeps authorization: without events:read the nested field is refused on every task, the tasks still come', async () => {
    const reader = await t.addPrincipal({ scopes: ['tasks:read'] });
    const res = await graphql<Page>(t, '{ tasks(limit: 3) { data { id events { data { id } } } } }', { token: reader.token });
    expect(res.data?.tasks.data.map((task) => task.events)).toEqual([null, null, null]);
    expect(res.errors?.map((e) => e.extensions.code)).toEqual(['forbidden_scope', 'forbidden_scope', 'forbidden_scope']);
  });
});
