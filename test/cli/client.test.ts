import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type OutputOf } from '../../src/client/index.ts';
import { ERROR_CODES } from '../../src/errors.ts';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { listen } from '../mcp/clients.ts';
import { runNode } from './run-baton.ts';

const EXAMPLE = fileURLToPath(new URL('../../docs/examples/agent-loop.ts', import.meta.url));

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

/** Every `{ method, path }` route function in the client, by its dotted place in the client object. */
function routesOf(node: object, prefix = ''): { at: string; method: string; path: string }[] {
  return Object.entries(node).flatMap(([key, value]: [string, unknown]) => {
    const at = prefix ? `${prefix}.${key}` : key;
    if (typeof value === 'function' && 'path' in value && 'method' in value) return [{ at, method: String(value.method), path: String(value.path) }];
    return typeof value === 'object' && value !== null ? routesOf(value, at) : [];
  });
}

it('calls only routes the registry serves, with the method it binds', () => {
  const bindings = new Set(operations.map((op) => `${op.http.method} ${op.http.path}`));
  const routes = routesOf(createClient({ baseUrl: 'http://unused.test', token: 'unused' }));
  expect(routes.length).toBeGreaterThan(20);
  expect(routes.filter((r) => !bindings.has(`${r.method} ${r.path}`))).toEqual([]);
});

it('runs the documented agent loop as written: it claims, heartbeats and hands every docs task to review', { timeout: 120_000 }, async () => {
  const ids: string[] = [];
  for (const title of ['write the guide', 'check the guide']) {
    ids.push((await t.request('POST', '/api/v1/tasks', { body: { title, labels: ['docs'] } })).json<{ id: string }>().id);
  }
  // The example imports the client package by name; here it runs on the checkout's src/client/
  // (test/package/packages.test.ts runs it as written on the packed client).
  const dir = await mkdtemp(join(tmpdir(), 'baton-example-'));
  const script = join(dir, 'agent-loop.ts');
  const source = await readFile(EXAMPLE, 'utf8');
  await writeFile(script, source.replace("from 'baton-tasks-client'", `from ${JSON.stringify(new URL('../../src/client/index.ts', import.meta.url).href)}`));
  const { code, stdout, stderr } = await runNode([script], { BATON_URL: baseUrl, BATON_TOKEN: t.adminToken }).finally(() => rm(dir, { recursive: true, force: true }));
  expect(stderr).toBe('');
  expect(code).toBe(0);
  expect(stdout).toContain('working as admin');
  for (const id of ids) {
    expect(stdout).toContain(`ready for review: ${id}`);
    expect((await t.request('GET', `/api/v1/tasks/${id}`)).json()).toMatchObject({ status: 'in_review' });
  }
});

it('is documented in docs/client.md exactly as the file the test runs, in under 20 lines', async () => {
  const example = await readFile(EXAMPLE, 'utf8');
  expect(example.trimEnd().split('\n').length).toBeLessThan(20);
  expect(await readFile(new URL('../../docs/client.md', import.meta.url), 'utf8')).toContain('```ts\n' + example + '```');
});

it('names in docs/client.md only the error codes, operations and members the server has', async () => {
  const known = new Set<string>(ERROR_CODES);
  const collect = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(collect);
    if (typeof node !== 'object' || node === null) return;
    const { properties, operationId, name, enum: values } = node as Record<string, unknown>;
    for (const key of Object.keys(properties ?? {})) known.add(key);
    for (const value of [operationId, name, ...(Array.isArray(values) ? (values as unknown[]) : [])]) if (typeof value === 'string') known.add(value);
    Object.values(node).forEach(collect);
  };
  collect((await t.app.inject({ url: '/api/v1/openapi.json', headers: { authorization: `Bearer ${t.adminToken}` } })).json());
  const page = await readFile(new URL('../../docs/client.md', import.meta.url), 'utf8');
  const named = [...page.matchAll(/`([a-z]+(?:_[a-z0-9]+)+)`/g)].map((m) => m[1] ?? '');
  expect(named.length).toBeGreaterThan(5);
  expect(named.filter((n) => !known.has(n))).toEqual([]);
});

it("types a gated write's answer as its output or the pending approval it answers 202 with", async () => {
  const agent = await t.addPrincipal({ scopes: ['tasks:read', 'tasks:write'] });
  const client = createClient({ baseUrl, token: agent.token });
  const task = await client.tasks.create({ title: 'delete me, once a human agrees' });
  const answer = await client.tasks.delete({ id: task.id });
  // Compiles only while the approval is in the output type (the typecheck holds it).
  const pending: OutputOf<'approvals_get'> | undefined = 'operation' in answer ? answer : undefined;
  expect(pending).toMatchObject({ status: 'pending', operation: 'tasks_delete' });
});

it('turns a problem into a BatonProblem with its code, hint and retryable flag', async () => {
  const client = createClient({ baseUrl, token: t.adminToken });
  const failure = await client.tasks.get({ id: 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV' }).catch((error: unknown) => error);
  expect(failure).toMatchObject({ name: 'BatonProblem', status: 404, code: 'not_found', retryable: false });
  expect((failure as { hint: string }).hint).toBeTruthy();
});

it('with attempts, sends a write whose answer was lost again under the same key, so it applies once', async () => {
  const keys: string[] = [];
  // The server gets the first request and applies it, but its answer never reaches the caller.
  const losesFirstAnswer: typeof fetch = async (input, init) => {
    keys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
    const response = await fetch(input, init);
    if (keys.length === 1) throw new TypeError('fetch failed');
    return response;
  };
  const client = createClient({ baseUrl, token: t.adminToken, fetch: losesFirstAnswer, attempts: 2 });
  const title = `sent twice, made once ${Date.now()}`;
  const task = await client.call('tasks_create', { title });
  expect(keys).toHaveLength(2);
  expect(keys[1]).toBe(keys[0]);
  const listed = await client.tasks.list({ q: title });
  expect(listed.data.map((t) => t.id)).toEqual([task.id]);
});
