import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { buildClientSchema, getIntrospectionQuery, type IntrospectionQuery, isObjectType } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_COMPLEXITY, MAX_DEPTH, MAX_NESTING, MAX_TOKENS } from '../../src/adapters/graphql/limits.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from './client.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

describe('GraphQL schema', () => {
  it('answers introspection with the registry: reads as queries, writes as mutations, relations on entities', async () => {
    const res = await graphql<IntrospectionQuery>(t, getIntrospectionQuery());
    expect(res.status).toBe(200);
    expect(res.errors).toBeUndefined();
    const schema = buildClientSchema(res.data as IntrospectionQuery);
    const query = schema.getQueryType()?.getFields() ?? {};
    const mutation = schema.getMutationType()?.getFields() ?? {};
    expect(Object.keys(query)).toEqual(expect.arrayContaining(['whoami', 'tasks', 'task', 'taskEvents', 'events', 'leases', 'approvals', 'agents', 'tokens']));
    expect(Object.keys(mutation)).toEqual(expect.arrayContaining(['createTask', 'updateTask', 'deleteTask', 'claimTask', 'claimNextTask', 'heartbeatLease', 'releaseLease']));
    expect(mutation['updateTask']?.args.map((a) => a.name)).toEqual(expect.arrayContaining(['id', 'status', 'idempotency_key', 'expected_version']));
    expect(query['tasks']?.args.map((a) => a.name)).not.toContain('fields');
    const task = schema.getType('Task');
    expect(isObjectType(task) && Object.keys(task.getFields())).toEqual(expect.arrayContaining(['id', 'title', 'legal_transitions', 'events']));
    expect(String(query['tasks']?.type)).toBe('TaskPage');
  });
});

describe('GraphQL over a real HTTP connection', () => {
  it('creates a task and reads it back, with the RateLimit fields and the write key in extensions', async () => {
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const port = (t.app.server.address() as AddressInfo).port;
    expect(address).toContain(String(port));
    const post = async (query: string, variables: Record<string, unknown> = {}) => {
      const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json', accept: 'application/graphql-response+json' },
        body: JSON.stringify({ query, variables }),
      });
      return { res, body: (await res.json()) as { data: Record<string, { id: string; title: string; version: number }>; extensions?: { idempotency: Record<string, { key: string; replayed: boolean }> } } };
    };
    const key = randomUUID();
    const create = 'mutation ($key: String, $title: String!) { createTask(title: $title, idempotency_key: $key) { id title version } }';
    const first = await post(create, { key, title: 'over the wire' });
    expect(first.res.status, JSON.stringify(first.body)).toBe(200);
    expect(first.res.headers.get('ratelimit')).toMatch(/^"default";r=\d+;t=\d+$/);
    expect(first.body.extensions?.idempotency['createTask']).toEqual({ key, replayed: false });
    const id = first.body.data['createTask']?.id;
    const again = await post(create, { key, title: 'over the wire' });
    expect(again.body.data['createTask']?.id).toBe(id);
    expect(again.body.extensions?.idempotency['createTask']).toEqual({ key, replayed: true });

    const read = await post('query ($id: ID!) { task(id: $id) { id title version } }', { id });
    expect(read.res.status).toBe(200);
    expect(read.body.data['task']).toEqual({ id, title: 'over the wire', version: 1 });
  });
});

describe('GraphQL errors', () => {
  it('refuses a request without a token as a whole, with the 401 problem', async () => {
    const res = await graphql(t, '{ tasks { data { id } } }', { token: null });
    expect(res.status).toBe(401);
    expect(res.data).toBeUndefined();
    const problem = res.errors?.[0]?.extensions;
    expect(problem).toMatchObject({ code: 'unauthenticated', status: 401, retryable: false });
    for (const member of ['title', 'detail', 'hint', 'docs_url', 'type']) expect(typeof problem?.[member], member).toBe('string');
  });

  it('gives a field error the problem REST would send, without a stack', async () => {
    const res = await graphql(t, '{ task(id: "tsk_01M83WANFPJPNEW6TTHYSP4VDD") { id } }');
    expect(res.status).toBe(200);
    expect(res.data).toEqual({ task: null });
    const error = res.errors?.[0];
    expect(error?.path).toEqual(['task']);
    expect(error?.extensions).toMatchObject({ code: 'not_found', status: 404, retryable: false });
    expect(JSON.stringify(res)).not.toMatch(/ at .*\.ts:\d+/);
  });

  it('passes expected_version as If-Match: a stale one is conflict_version with the current version', async () => {
    const made = await graphql<{ createTask: { id: string } }>(t, 'mutation { createTask(title: "versioned") { id } }');
    const id = made.data?.createTask.id;
    const res = await graphql(t, `mutation { updateTask(id: "${id}", title: "late", expected_version: 7) { id } }`);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'conflict_version', status: 409, retryable: true, current_version: 1 });
  });

  it('answers a gated write with the pending Approval (REST 202)', async () => {
    const made = await graphql<{ createTask: { id: string } }>(t, 'mutation { createTask(title: "to delete") { id } }');
    const agent = await t.addPrincipal({ scopes: ['tasks:read', 'tasks:write'] });
    const res = await graphql<{ deleteTask: { __typename: string; status: string; operation: string } }>(
      t,
      `mutation { deleteTask(id: "${made.data?.createTask.id}") { __typename ... on Approval { status operation } } }`,
      { token: agent.token },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.deleteTask).toEqual({ __typename: 'Approval', status: 'pending', operation: 'tasks_delete' });
  });

  it('refuses an invalid document as invalid_query', async () => {
    const res = await graphql(t, '{ tasks { data { nope } } }');
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_query', status: 400 });
  });

  it('answers an invalid document 400 whatever the Accept, as a variable of the wrong type is', async () => {
    for (const accept of ['application/json', '*/*']) {
      for (const query of ['{ tasks { data { nope } } }', '{ tasks { ']) {
        const res = await graphql(t, query, { accept });
        expect(res.status, `${accept} ${query}`).toBe(400);
        expect(res.data).toBeUndefined();
        expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_query', status: 400 });
      }
    }
    const variable = await graphql(t, 'query ($n: Int) { tasks(limit: $n) { has_more } }', { variables: { n: 'ten' }, accept: 'application/json' });
    expect(variable.status).toBe(400);
  });

  it(`refuses a query deeper than ${MAX_DEPTH} before it runs, fragments included`, async () => {
    const ofTypes = (n: number): string => (n === 0 ? 'name' : `ofType { ${ofTypes(n - 1)} }`);
    const at = (n: number) => `{ ...F } fragment F on Query { __type(name: "Task") { fields { type { ${ofTypes(n)} } } } }`;
    const ok = await graphql(t, at(MAX_DEPTH - 4));
    expect(ok.errors, JSON.stringify(ok.errors)).toBeUndefined();
    const res = await graphql(t, at(MAX_DEPTH - 3));
    expect(res.status).toBe(400);
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'query_too_complex', status: 400, measure: 'depth', limit: MAX_DEPTH, found: MAX_DEPTH + 1 });
  });

  it(`refuses a query costing more than ${MAX_COMPLEXITY}, page sizes from variables included`, async () => {
    const query = 'query ($n: Int) { tasks(limit: $n) { data { id title events(limit: $n) { data { id type } } } } }';
    expect((await graphql(t, query, { variables: { n: 10 } })).errors).toBeUndefined();
    const res = await graphql(t, query, { variables: { n: 100 } });
    expect(res.status).toBe(400);
    expect(res.data).toBeUndefined();
    expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'query_too_complex', status: 400, measure: 'complexity', limit: MAX_COMPLEXITY });
    expect(Number(res.errors?.[0]?.extensions['found'])).toBeGreaterThan(MAX_COMPLEXITY);
  });

  it(`refuses a document nested deeper than ${MAX_NESTING} (it overflowed the parser's stack: a 500) or longer than ${MAX_TOKENS} tokens`, async () => {
    const nested = `{ ${'a { '.repeat(20_000)}b${' }'.repeat(20_000)} }`;
    const literal = `{ tasks(labels: ${'['.repeat(60_000)}${']'.repeat(60_000)}) { data { id } } }`;
    for (const query of [nested, literal]) {
      const res = await graphql(t, query);
      expect(res.status).toBe(400);
      expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'query_too_complex', status: 400, measure: 'nesting', limit: MAX_NESTING, found: MAX_NESTING + 1 });
    }
    const aliases = (n: number) => `{ ${Array.from({ length: n }, (_, i) => `a${i}: whoami { principal { id } }`).join(' ')} }`;
    expect((await graphql(t, aliases(400))).errors).toBeUndefined();
    const long = await graphql(t, aliases(600));
    expect(long.errors?.[0]?.extensions).toMatchObject({ code: 'query_too_complex', status: 400, measure: 'tokens', limit: MAX_TOKENS });
  });
});
