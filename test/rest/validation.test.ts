import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIds } from '../../src/ids.ts';
import { generateToken } from '../../src/tokens.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { countRows, createTask, expectProblem, type TaskBody } from './fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

interface FieldError {
  pointer: string;
  detail: string;
  location: string;
}
const fieldErrors = (problem: Record<string, unknown>) => problem.errors as FieldError[];

/** Runs a request that must be refused, and proves it wrote no task and no event. */
async function refusedWithoutWrites(send: () => ReturnType<TestServer['request']>) {
  const { tasks, events } = await countRows(t);
  const res = await send();
  expect(await countRows(t)).toMatchObject({ tasks, events });
  return res;
}

describe('query parameters', () => {
  it.each([
    ['limit=101', '100'],
    ['limit=0', '1'],
    ['limit=-5', '1'],
  ])('GET /tasks?%s is 400 invalid_parameter naming the bound %s', async (query, bound) => {
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks?${query}`), 400, 'invalid_parameter');
    const [error] = fieldErrors(problem);
    expect(error).toMatchObject({ pointer: '/limit', location: 'query' });
    expect(error?.detail).toContain(bound);
    expect(problem.detail).toContain(bound);
  });

  it('limit bounds hold on the event lists too', async () => {
    expectProblem(await t.request('GET', '/api/v1/events?limit=101'), 400, 'invalid_parameter');
    const task = await createTask(t);
    expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}/events?limit=0`), 400, 'invalid_parameter');
  });

  it('limit=abc is 400 invalid_parameter; limit=1 and limit=100 are accepted', async () => {
    const problem = expectProblem(await t.request('GET', '/api/v1/tasks?limit=abc'), 400, 'invalid_parameter');
    expect(fieldErrors(problem)[0]?.pointer).toBe('/limit');
    expect((await t.request('GET', '/api/v1/tasks?limit=1')).status).toBe(200);
    expect((await t.request('GET', '/api/v1/tasks?limit=100')).status).toBe(200);
  });

  it('an unknown query parameter is 400 invalid_parameter pointing at it', async () => {
    const problem = expectProblem(await t.request('GET', '/api/v1/tasks?colour=red'), 400, 'invalid_parameter');
    expect(fieldErrors(problem)).toContainEqual(expect.objectContaining({ pointer: '/colour', location: 'query' }));
  });

  it('an unknown status filter value is 400 invalid_parameter', async () => {
    const problem = expectProblem(await t.request('GET', '/api/v1/tasks?status=doing'), 400, 'invalid_parameter');
    expect(fieldErrors(problem)[0]?.pointer).toBe('/status');
  });
});

describe('path parameters and unknown resources', () => {
  it('a malformed task id is 400 invalid_parameter with pointer /id', async () => {
    for (const url of ['/api/v1/tasks/tsk_nope', '/api/v1/tasks/tsk_nope/events']) {
      const problem = expectProblem(await t.request('GET', url), 400, 'invalid_parameter');
      expect(fieldErrors(problem)).toContainEqual(expect.objectContaining({ pointer: '/id', location: 'path' }));
    }
    const res = await refusedWithoutWrites(() => t.request('PATCH', '/api/v1/tasks/tsk_nope', { body: { title: 'x' } }));
    const problem = expectProblem(res, 400, 'invalid_parameter');
    expect(fieldErrors(problem)[0]?.pointer).toBe('/id');
  });

  it('a well-formed but unknown id is 404 not_found on read, write and history', async () => {
    const id = createIds().make('tsk');
    expect(expectProblem(await t.request('GET', `/api/v1/tasks/${id}`), 404, 'not_found').detail).toContain(id);
    expectProblem(await t.request('GET', `/api/v1/tasks/${id}/events`), 404, 'not_found');
    expectProblem(await refusedWithoutWrites(() => t.request('PATCH', `/api/v1/tasks/${id}`, { body: { title: 'x' } })), 404, 'not_found');
  });

  it('an unknown route is 404 route_not_found', async () => {
    expectProblem(await t.request('GET', '/api/v1/nope'), 404, 'route_not_found');
    expectProblem(await t.request('GET', '/nope'), 404, 'route_not_found');
  });

  it('a wrong method on a known path is 405 method_not_allowed with Allow', async () => {
    const allow = (res: Awaited<ReturnType<TestServer['request']>>) => String(res.headers.allow).split(/,\s*/);
    const collection = await t.request('PUT', '/api/v1/tasks', { body: { title: 'x' } });
    expectProblem(collection, 405, 'method_not_allowed');
    expect(allow(collection)).toEqual(expect.arrayContaining(['GET', 'POST']));
    expect(allow(collection)).not.toContain('PUT');

    const task = await createTask(t);
    const item = await t.request('PUT', `/api/v1/tasks/${task.id}`, { body: { title: 'x' } });
    expectProblem(item, 405, 'method_not_allowed');
    expect(allow(item)).toEqual(expect.arrayContaining(['GET', 'PATCH']));
    expect(allow(item)).not.toContain('PUT');
    expect(allow(item)).not.toContain('POST');
  });
});

describe('request bodies', () => {
  it('malformed JSON is 400 malformed_json', async () => {
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { payload: '{"title": "unterminated' }));
    expectProblem(res, 400, 'malformed_json');
  });

  it('an empty body with Content-Type application/json is 400 malformed_json', async () => {
    expectProblem(await t.request('POST', '/api/v1/tasks', { payload: '' }), 400, 'malformed_json');
  });

  it('a wrong type is 400 validation_failed pointing at the field', async () => {
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { body: { title: 5 } }));
    const problem = expectProblem(res, 400, 'validation_failed');
    expect(fieldErrors(problem)).toEqual([expect.objectContaining({ pointer: '/title', location: 'body' })]);
  });

  it('several bad fields are all listed', async () => {
    const problem = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: '', priority: 'asap', labels: ['UPPER'] } }), 400, 'validation_failed');
    const pointers = fieldErrors(problem).map((e) => e.pointer);
    expect(pointers).toEqual(expect.arrayContaining(['/title', '/priority', '/labels/0']));
  });

  it('a missing required field is 400 validation_failed pointing at it', async () => {
    const problem = expectProblem(await t.request('POST', '/api/v1/tasks', { body: { description: 'no title' } }), 400, 'validation_failed');
    expect(fieldErrors(problem)).toEqual([{ pointer: '/title', detail: 'required', location: 'body' }]);
  });

  it('an unknown body field is 400 validation_failed pointing at it', async () => {
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { body: { title: 'ok', colour: 'red' } }));
    const problem = expectProblem(res, 400, 'validation_failed');
    expect(fieldErrors(problem)).toEqual([expect.objectContaining({ pointer: '/colour', location: 'body' })]);
  });

  it('a body that is not a JSON object is 400 validation_failed', async () => {
    expectProblem(await t.request('POST', '/api/v1/tasks', { body: ['title'] }), 400, 'validation_failed');
  });

  it('an invalid status value on PATCH is 400 validation_failed pointing at /status', async () => {
    const task = await createTask(t);
    const problem = expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'finished' } }), 400, 'validation_failed');
    expect(fieldErrors(problem)[0]?.pointer).toBe('/status');
  });

  it('an empty PATCH is 400 validation_failed whose pointer is the whole body (the empty JSON pointer)', async () => {
    const task = await createTask(t);
    const problem = expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: {} }), 400, 'validation_failed');
    // RFC 6901: "" is the whole document; "/" would name a member called "".
    expect(fieldErrors(problem)).toEqual([expect.objectContaining({ pointer: '', location: 'body' })]);
  });

  it('title is limited to 200 characters and description to 4000', async () => {
    const longTitle = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { body: { title: 't'.repeat(201) } }));
    const titleError = fieldErrors(expectProblem(longTitle, 400, 'validation_failed'));
    expect(titleError[0]?.pointer).toBe('/title');
    expect(titleError[0]?.detail).toContain('200');

    const longDescription = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { body: { title: 'ok', description: 'd'.repeat(4001) } }));
    const descriptionError = fieldErrors(expectProblem(longDescription, 400, 'validation_failed'));
    expect(descriptionError[0]?.pointer).toBe('/description');
    expect(descriptionError[0]?.detail).toContain('4000');

    const atLimits = await t.request('POST', '/api/v1/tasks', { body: { title: 't'.repeat(200), description: 'd'.repeat(4000) } });
    expect(atLimits.status, atLimits.body).toBe(201);

    const task = atLimits.json<TaskBody>();
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 't'.repeat(201) } }), 400, 'validation_failed');
  });

  it('a body over 1 MiB is 413 payload_too_large', async () => {
    const res = await refusedWithoutWrites(() =>
      t.request('POST', '/api/v1/tasks', { body: { title: 'big', description: 'x'.repeat(1024 * 1024 + 1) } }),
    );
    expectProblem(res, 413, 'payload_too_large');
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded', 'application/xml'])('a %s body is 415 unsupported_media_type', async (type) => {
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { payload: 'title=hello', headers: { 'content-type': type } }));
    expectProblem(res, 415, 'unsupported_media_type');
  });
});

describe('authentication and authorization', () => {
  it('no token is 401 unauthenticated', async () => {
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: null }), 401, 'unauthenticated');
    expectProblem(await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { token: null, body: { title: 'x' } })), 401, 'unauthenticated');
  });

  it('a non-Bearer Authorization header is 401 unauthenticated', async () => {
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: null, headers: { authorization: `Basic ${t.adminToken}` } }), 401, 'unauthenticated');
  });

  it('a token with a bad checksum is 401 invalid_token', async () => {
    const last = t.adminToken.at(-1) === 'a' ? 'b' : 'a';
    const tampered = `${t.adminToken.slice(0, -1)}${last}`;
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: tampered }), 401, 'invalid_token');
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: 'bat_short' }), 401, 'invalid_token');
  });

  it('a well-formed token the server never issued is 401 invalid_token', async () => {
    expectProblem(await t.request('GET', '/api/v1/tasks', { token: generateToken() }), 401, 'invalid_token');
  });

  it('a token without tasks:write may not create: 403 forbidden_scope naming the scope, nothing written', async () => {
    const reader = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { token: reader.token, body: { title: 'not allowed' } }));
    const problem = expectProblem(res, 403, 'forbidden_scope');
    expect(problem.required_scope).toBe('tasks:write');
    expect(problem.retryable).toBe(false);
    expect((await t.request('GET', '/api/v1/tasks', { token: reader.token })).status).toBe(200);
  });

  it('a token without events:read may not read the timeline', async () => {
    const reader = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    expect(expectProblem(await t.request('GET', '/api/v1/events', { token: reader.token }), 403, 'forbidden_scope').required_scope).toBe('events:read');
  });

  it('an agent whose allowlist excludes tasks_create gets 403 tool_not_allowed; nothing written', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', allowlist: ['tasks_get', 'tasks_list'] });
    const res = await refusedWithoutWrites(() => t.request('POST', '/api/v1/tasks', { token: agent.token, body: { title: 'not allowed' } }));
    const problem = expectProblem(res, 403, 'tool_not_allowed');
    expect(problem.detail).toContain('tasks_create');
    expect((await t.request('GET', '/api/v1/tasks', { token: agent.token })).status).toBe(200);
  });
});
