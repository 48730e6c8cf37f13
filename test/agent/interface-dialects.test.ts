import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ERRORS, hintReferences } from '../../src/errors.ts';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from '../graphql/client.ts';
import { connectV2, listen, outputOf, problemOf, type ToolResult } from '../mcp/clients.ts';
import { type OpenApiDocument, withSchemasInlined } from '../openapi/openapi-document.ts';

/**
 * Each interface speaks its own way about the same operations: what its schemas advertise is what
 * this server enforces (its configured bounds), and its problems name its own calls.
 */
const LEASE_TTL = { defaultS: 120, minS: 60, maxS: 900 };

let t: TestServer;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ leaseTtl: LEASE_TTL });
  mcp = await connectV2(await listen(t), t.adminToken, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

describe('ttl_s advertises the bounds this server enforces (BATON_LEASE_TTL_MIN_S, _MAX_S)', () => {
  const CLAIMS = ['tasks_claim', 'tasks_claim_next', 'leases_heartbeat', 'leases_cycle'];

  it('in the OpenAPI document', async () => {
    const served = (await t.request('GET', '/api/v1/openapi.json')).json<OpenApiDocument>();
    const doc = withSchemasInlined(served) as unknown as { paths: Record<string, Record<string, { operationId: string; requestBody?: { content: Record<string, { schema: { properties: Record<string, Record<string, unknown>> } }> } }>> };
    const bodies = Object.values(doc.paths).flatMap((item) => Object.values(item)).filter((op) => CLAIMS.includes(op.operationId));
    expect(bodies.map((op) => op.operationId).sort()).toEqual([...CLAIMS].sort());
    for (const op of bodies) {
      const ttl = op.requestBody?.content['application/json']?.schema.properties['ttl_s'];
      expect(ttl, op.operationId).toMatchObject({ type: 'integer', minimum: 60, maximum: 900 });
      expect(String(ttl?.['description'])).toContain('120');
    }
  });

  it('in the served limits table', async () => {
    const page = (await t.request('GET', '/spec/api.md')).body;
    expect(page).toMatch(/`ttl_s`: 60–900/);
    expect(page).not.toMatch(/`ttl_s`: 1–86400/);
  });

  it('in the full manifest', async () => {
    const manifest = (await t.request('GET', '/api/v1?view=full')).json<{ leases: { ttl_s: Record<string, number> } }>();
    expect(manifest.leases.ttl_s).toEqual({ default: 120, min: 60, max: 900 });
  });

  it('in the MCP tools', async () => {
    const { tools } = await mcp.listTools();
    for (const name of CLAIMS) {
      const ttl = tools.find((tool) => tool.name === name)?.inputSchema.properties?.['ttl_s'] as Record<string, unknown> | undefined;
      expect(ttl, name).toMatchObject({ type: 'integer', minimum: 60, maximum: 900 });
    }
  });

  it('in the GraphQL schema, whose ttl_s arguments describe them', async () => {
    const res = await graphql<{ __type: { fields: { name: string; args: { name: string; description: string | null; defaultValue: string | null }[] }[] } }>(
      t,
      '{ __type(name: "Mutation") { fields { name args { name description defaultValue } } } }',
    );
    // A lease's ttl_s (a reservation's has bounds of its own, spec/collaboration.md "Reservations").
    const leaseFields = (res.data?.__type.fields ?? []).filter((field) => !/reservation/i.test(field.name));
    const ttls = leaseFields.flatMap((field) => field.args.filter((arg) => arg.name === 'ttl_s'));
    expect(ttls.length).toBeGreaterThanOrEqual(CLAIMS.length);
    for (const arg of ttls) {
      expect(arg.description).toContain('60–900');
      // No default: a heartbeat without ttl_s keeps its lease's own length.
      expect(arg.defaultValue).toBeNull();
    }
  });

  it('which are what a claim is held to: below them refused, at the top accepted', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'bounded lease' } })).json<{ id: string }>();
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 30 } })).status).toBe(400);
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 900 } })).status).toBe(200);
  });
});

const UNKNOWN_TASK = 'tsk_01JDZ8Q6W9X5E3B2T7N4K1M0RA';
type Page = { data: { id: string }[] };

describe('list filters are arrays over MCP and GraphQL, comma-separated (or repeated) over REST', () => {
  let wanted: string;
  beforeAll(async () => {
    wanted = (await t.request('POST', '/api/v1/tasks', { body: { title: 'both labels', labels: ['dialect-a', 'dialect-b'] } })).json<{ id: string }>().id;
    await t.request('POST', '/api/v1/tasks', { body: { title: 'one label', labels: ['dialect-a'] } });
  });

  it('MCP lists them as arrays of their values', async () => {
    const { tools } = await mcp.listTools();
    const input = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema.properties ?? {};
    expect(input('tasks_list')['status']).toMatchObject({ type: 'array', items: { enum: expect.arrayContaining(['todo', 'in_review']) as unknown } });
    expect(input('tasks_list')['labels']).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(input('events_list')['types']).toMatchObject({ type: 'array' });
  });

  it('MCP takes arrays, and the comma form it took before', async () => {
    for (const args of [{ status: ['todo'], labels: ['dialect-a', 'dialect-b'] }, { status: 'todo', labels: 'dialect-a,dialect-b' }]) {
      const page = outputOf<Page>((await mcp.callTool({ name: 'tasks_list', arguments: args })));
      expect(page.data.map((task) => task.id), JSON.stringify(args)).toEqual([wanted]);
    }
  });

  it('GraphQL declares and takes lists', async () => {
    const types = await graphql<{ __type: { fields: { name: string; args: { name: string; type: { kind: string; ofType: { kind: string } | null } }[] }[] } }>(
      t,
      '{ __type(name: "Query") { fields { name args { name type { kind ofType { kind } } } } } }',
    );
    const args = types.data?.__type.fields.find((field) => field.name === 'tasks')?.args ?? [];
    for (const name of ['status', 'labels']) expect(args.find((arg) => arg.name === name)?.type.kind, name).toBe('LIST');
    const res = await graphql<{ tasks: Page }>(t, '{ tasks(status: [todo], labels: ["dialect-a", "dialect-b"]) { data { id } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data?.tasks.data.map((task) => task.id)).toEqual([wanted]);
  });

  it("GraphQL still takes a v1 query's String variables in the lists' places (the comma form), and no other scalar", async () => {
    const v1 = 'query ($s: String, $l: String) { tasks(status: $s, labels: $l) { data { id } } }';
    const res = await graphql<{ tasks: Page }>(t, v1, { variables: { s: 'todo', l: 'dialect-a,dialect-b' } });
    expect(res.errors).toBeUndefined();
    expect(res.data?.tasks.data.map((task) => task.id)).toEqual([wanted]);
    const wrongScalar = await graphql(t, 'query ($l: Int) { tasks(labels: $l) { data { id } } }', { variables: { l: 1 } });
    expect(wrongScalar.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_query' });
  });

  it("GraphQL still takes a v1 query's string literal for status (the comma form), and refuses one that names no status", async () => {
    const res = await graphql<{ tasks: Page }>(t, '{ tasks(status: "todo,blocked", labels: "dialect-a,dialect-b") { data { id } } }');
    expect(res.errors).toBeUndefined();
    expect(res.data?.tasks.data.map((task) => task.id)).toEqual([wanted]);
    const single = await graphql<{ tasks: Page }>(t, '{ tasks(status: "todo", labels: "dialect-a,dialect-b") { data { id } } }');
    expect(single.data?.tasks.data.map((task) => task.id)).toEqual([wanted]);
    const unknown = await graphql(t, '{ tasks(status: "todo,sleeping") { data { id } } }');
    expect(unknown.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_query' });
  });

  it('REST takes the comma form and the parameter repeated', async () => {
    for (const query of ['labels=dialect-a,dialect-b', 'labels=dialect-a&labels=dialect-b']) {
      const res = await t.request('GET', `/api/v1/tasks?${query}`);
      expect(res.status, res.body).toBe(200);
      expect(res.json<Page>().data.map((task) => task.id), query).toEqual([wanted]);
    }
  });

  it('a refused argument over MCP or GraphQL names the field without an HTTP location', async () => {
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_list', arguments: { status: ['someday'], limit: 500 } })));
    const overGraphql = (await graphql(t, '{ tasks(labels: ["Not A Label"], limit: 500) { data { id } } }')).errors?.[0]?.extensions;
    for (const problem of [overMcp, overGraphql]) {
      expect(problem).toMatchObject({ code: 'invalid_parameter' });
      const errors = problem?.['errors'] as { pointer: string; location?: string }[];
      expect(errors.map((e) => e.pointer)).toContain('/limit');
      for (const error of errors) expect(error).not.toHaveProperty('location');
      expect(String(problem?.['hint'])).not.toMatch(/OpenAPI/);
    }
    const overRest = (await t.request('GET', '/api/v1/tasks?limit=500')).json<{ errors: { location: string }[] }>();
    expect(overRest.errors[0]?.location).toBe('query');
  });
});

describe('hints name the way forward in the interface the caller used', () => {
  it('every reference in the catalogue\'s hints names an operation of the registry', () => {
    const names = new Set(operations.map((op) => op.name));
    for (const code of ERROR_CODES) for (const name of hintReferences(ERRORS[code].hint)) expect(names.has(name), `${code}: ${name}`).toBe(true);
  });

  it('a task not found: REST names the route, MCP the tool, GraphQL the query', async () => {
    const rest = (await t.request('GET', `/api/v1/tasks/${UNKNOWN_TASK}`)).json<{ hint: string }>();
    expect(rest.hint).toContain('GET /api/v1/tasks');
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_get', arguments: { id: UNKNOWN_TASK } })));
    expect(overMcp['hint']).toContain('`tasks_list`');
    expect(overMcp['hint']).not.toContain('/api/v1');
    const overGraphql = (await graphql(t, `{ task(id: "${UNKNOWN_TASK}") { id } }`)).errors?.[0]?.extensions;
    expect(overGraphql?.['hint']).toContain('`tasks` query');
    expect(overGraphql?.['hint']).not.toContain('/api/v1');
  });

  it('a version conflict: MCP and GraphQL say expected_version, not If-Match or ETag', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'raced' } })).json<{ id: string }>();
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_update', arguments: { id: task.id, title: 'late', expected_version: 9 } })));
    const overGraphql = (await graphql(t, `mutation { updateTask(id: "${task.id}", title: "late", expected_version: 9) { id } }`)).errors?.[0]?.extensions;
    for (const problem of [overMcp, overGraphql]) {
      expect(problem).toMatchObject({ code: 'conflict_version' });
      expect(String(problem?.['hint'])).toContain('`expected_version`');
      expect(String(problem?.['hint'])).not.toMatch(/If-Match|ETag/);
    }
    const overRest = (await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'late' }, ifMatch: '"9"' })).json<{ hint: string }>();
    expect(overRest.hint).toContain('If-Match');
  });

  it('an unknown argument: MCP points at the tool\'s inputSchema, REST at the OpenAPI document', async () => {
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_create', arguments: { title: 'x', bogus: 1 } })));
    expect(overMcp).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/bogus', detail: 'unknown field' }] });
    expect(String(overMcp['hint'])).toContain("the tool's inputSchema");
    expect(JSON.stringify(overMcp)).not.toMatch(/OpenAPI/);
    const overRest = (await t.request('POST', '/api/v1/tasks', { body: { title: 'x', bogus: 1 } })).json<{ hint: string }>();
    expect(overRest.hint).toContain('the OpenAPI document (GET /api/v1/openapi.json)');
  });

  it('an idempotency key refused: MCP says idempotency_key, REST the header', async () => {
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_create', arguments: { title: 'x', idempotency_key: 'k'.repeat(256) } })));
    expect(overMcp).toMatchObject({ code: 'idempotency_key_required' });
    expect(String(overMcp['hint'])).toContain('`idempotency_key`');
    expect(String(overMcp['hint'])).not.toContain('Idempotency-Key');
    const overRest = (await t.request('POST', '/api/v1/tasks', { body: { title: 'x' }, key: null })).json<{ hint: string }>();
    expect(overRest.hint).toContain('Idempotency-Key');
  });

  it('a description too long names the tool that stores the long text, over MCP too', async () => {
    const overMcp = problemOf((await mcp.callTool({ name: 'tasks_create', arguments: { title: 'x', description: 'd'.repeat(4001) } })));
    expect((overMcp['errors'] as { detail: string }[])[0]?.detail).toContain('artifacts_create');
  });

  it('a lease not found over MCP names leases_list with its arguments', async () => {
    const overMcp = problemOf((await mcp.callTool({ name: 'leases_get', arguments: { id: 'lea_01JDZ8Q6W9X5E3B2T7N4K1M0RA' } })));
    expect(overMcp['hint']).toContain('`leases_list` with {"holder":"me","state":"active"}');
  });

  it('a retired dotted tool name answers a tool error naming the tool to call now', async () => {
    const result = (await mcp.callTool({ name: 'tasks.get', arguments: { id: UNKNOWN_TASK } })) as ToolResult;
    expect(problemOf(result)).toMatchObject({ code: 'tool_renamed', status: 404, renamed_to: 'tasks_get' });
    expect(String(problemOf(result)['detail'])).toContain('tasks_get');
  });
});
