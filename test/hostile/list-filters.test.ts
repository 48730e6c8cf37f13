import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from '../graphql/client.ts';
import { fetchDocument, resolveParameter } from '../openapi/openapi-document.ts';
import { createTask, expectProblem } from '../rest/fixtures.ts';

let t: TestServer;
let taskId: string;
beforeAll(async () => {
  t = await startTestServer();
  taskId = (await createTask(t, { labels: ['x'] })).id;
});
afterAll(() => t.close());

/** Every list parameter of every GET route (comma-separated: `style: form` without `explode`), as the OpenAPI document describes them. */
async function listFilters(): Promise<{ path: string; name: string }[]> {
  const doc = await fetchDocument(t);
  return Object.entries(doc.paths).flatMap(([path, methods]) =>
    (methods.get?.parameters ?? [])
      .map((p) => resolveParameter(doc, [], p).parameter)
      .filter((p) => p.in === 'query' && (p as { style?: string; explode?: boolean }).style === 'form' && (p as { explode?: boolean }).explode === false)
      .map((p) => ({ path, name: p.name })),
  );
}

describe('an empty or blank list filter is 400 invalid_parameter naming it (one rule for every list filter)', () => {
  it('covers status, labels, types and fields on every route that has them', async () => {
    const filters = await listFilters();
    expect(filters.map((f) => f.name)).toEqual(expect.arrayContaining(['status', 'labels', 'types', 'fields']));
    for (const { path, name } of filters) {
      const url = path.replace('{id}', taskId);
      for (const value of ['', ',,,', ' , ', '%20']) {
        const problem = expectProblem(await t.request('GET', `${url}?${name}=${value}`), 400, 'invalid_parameter');
        expect(problem.retryable).toBe(false);
        expect(problem.errors).toContainEqual(expect.objectContaining({ pointer: `/${name}`, location: 'query', detail: expect.stringContaining('empty list') as unknown }));
      }
    }
  });

  it('a list with items next to blanks is read for its items', async () => {
    const res = await t.request('GET', '/api/v1/tasks?status=todo,,&labels=,x');
    expect(res.status, res.body).toBe(200);
    expect(res.json<{ data: { id: string }[] }>().data.map((task) => task.id)).toContain(taskId);
  });

  it('GraphQL gets the same rule, for an empty list and for the comma form it still takes', async () => {
    for (const args of ['status: []', 'labels: []', 'labels: ",,"']) {
      const res = await graphql(t, `{ tasks(${args}) { data { id } } }`);
      expect(res.errors?.[0]?.extensions, args).toMatchObject({ code: 'invalid_parameter', status: 400 });
    }
  });
});
