import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NextActionV2 } from '../../src/operations/tasks/v2-answer.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { matchTemplate, type OpenApiDocument, redoclyLint, resolveResponse, schemaCompiler } from '../openapi/openapi-document.ts';
import { createTask } from '../rest/fixtures.ts';
import { AGENT_SCOPES } from './follow.ts';
import { connectV2, listen, outputOf } from '../mcp/clients.ts';
import { Ajv2020 } from 'ajv/dist/2020.js';

/**
 * `/api/v2`: v1's operations with leaner task answers (spec/api.md, "Versions"). An agent starts at
 * the v2 manifest and follows v2 next_actions, which name an operation instead of spelling the
 * request; every answer it meets validates against the v2 OpenAPI document.
 */
let t: TestServer;
let v2: OpenApiDocument;
let validate: (method: string, path: string, status: number, body: unknown) => void;
beforeAll(async () => {
  t = await startTestServer();
  const res = await t.request('GET', '/api/v2/openapi.json', { token: null });
  expect(res.status).toBe(200);
  v2 = res.json<OpenApiDocument>();
  const compile = schemaCompiler(v2);
  validate = (method, path, status, body) => {
    const template = matchTemplate(v2, method, path.split('?')[0] ?? path);
    if (!template) throw new Error(`no ${method} ${path} in the v2 document`);
    const at = ['paths', template, method.toLowerCase(), 'responses', String(status)];
    const declared = v2.paths[template]?.[method.toLowerCase()]?.responses[String(status)];
    if (!declared) throw new Error(`${method} ${template} declares no ${status}`);
    const { path: resolved } = resolveResponse(v2, at, declared);
    const check = compile([...resolved, 'content', 'application/json', 'schema']);
    expect(check(body), `${method} ${path}: ${JSON.stringify(check.errors)}`).toBe(true);
  };
});
afterAll(() => t.close());

interface Manifest {
  version: string;
  operations: Record<string, string>;
  next_actions: NextActionV2[];
  conventions: { next_actions: string };
  mcp: { url: string };
  links: { openapi: string };
}

interface Carrier {
  id: string;
  task_id?: string;
  lease?: { id: string } | null;
  next_actions: NextActionV2[];
}

/**
 * Sends a v2 next action the way the manifest's convention says: the operation's route from
 * `operations`, its `{id}` the action's or (absent) the carrier's task or lease id, the key as
 * Idempotency-Key, `expected_version` as If-Match, `args` (with what `fill` names) as the body, or the
 * query of a GET.
 */
async function send(manifest: Manifest, token: string, carrier: Carrier, action: NextActionV2, words: Record<string, string> = {}) {
  const route = manifest.operations[action.operation];
  if (!route) throw new Error(`${action.operation} is not in the manifest's operations`);
  const [method = '', template = ''] = route.split(' ');
  const taskId = carrier.task_id ?? carrier.id;
  const leaseId = carrier.task_id ? carrier.id : carrier.lease?.id;
  const id = action.id ?? (action.operation.startsWith('leases_') ? leaseId : taskId);
  const path = template.replace('{id}', id ?? '');
  const args = { ...action.args, ...Object.fromEntries((action.fill ?? []).map((name) => [name, words[name]])) };
  const query = method === 'GET' && action.args ? `?${new URLSearchParams(action.args as Record<string, string>).toString()}` : '';
  const res = await t.request(method, `${path}${query}`, {
    token,
    ...(method === 'GET' ? {} : { body: args }),
    ...(action.key === undefined ? {} : { key: action.key }),
    ...(action.expected_version === undefined ? {} : { ifMatch: `"${action.expected_version}"` }),
  });
  validate(method, `${path}${query}`, res.status, res.json());
  return res;
}

const offered = (actions: readonly NextActionV2[], operation: string): NextActionV2 => {
  const action = actions.find((a) => a.operation === operation);
  if (!action) throw new Error(`no ${operation} among ${JSON.stringify(actions)}`);
  return action;
};

describe('/api/v2', () => {
  it('an agent goes from the manifest through claim, heartbeat and hand-in, and a human approves, all by v2 next_actions', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await createTask(t, { title: 'Rotate the staging keys', labels: ['v2-loop'] });
    const artifact = await t.request('POST', '/api/v1/artifacts', { body: { content: 'the old keys expire Friday', task_id: task.id, name: 'notes.txt' } });
    expect(artifact.status).toBe(201);

    const served = await t.request('GET', '/api/v2', { token: agent.token });
    // The compact manifest stays within its 3 KB budget in v2's words too.
    expect(Buffer.byteLength(served.body)).toBeLessThanOrEqual(3 * 1024);
    const manifest = served.json<Manifest>();
    expect(manifest.version).toBe('v2');
    expect(manifest.operations['tasks_claim_next']).toBe('POST /api/v2/tasks/claim');
    expect(manifest.conventions.next_actions).toContain('expected_version as If-Match');
    expect(manifest.mcp.url).toMatch(/\/mcp\?api=v2$/);
    expect(manifest.links.openapi).toBe('/api/v2/openapi.json');
    const [start] = manifest.next_actions;
    expect(start?.operation).toBe('tasks_claim_next');
    expect(Object.keys(start ?? {})).toEqual(['operation', 'key']);

    const claimed = await send(manifest, agent.token, { id: '', next_actions: [] }, start!, {});
    expect(claimed.status, claimed.body).toBe(200);
    const claim = claimed.json<{ claims: { task: Carrier & { status: string; artifacts: unknown[] }; lease: { id: string; holder: unknown; expires_at: string } }[] }>().claims[0]!;
    expect(claim.task.status).toBe('in_progress');
    // The task names neither the holder (it is you), a normal priority, nothing to wait on, nor the artifact's digest and link (its file name it does).
    expect(claim.task.lease).toEqual({ id: claim.lease.id, epoch: 1, expires_at: claim.lease.expires_at });
    expect(claim.task).not.toHaveProperty('priority');
    expect(claim.task).not.toHaveProperty('waiting_on');
    expect(claim.task.artifacts).toEqual([{ id: artifact.json().id, name: 'notes.txt', size: 26 }]);
    // The claim's own lease keeps every member: only the task's summary of it is lean.
    expect(claim.lease.holder).toEqual({ id: agent.id, kind: 'agent' });

    const beat = await send(manifest, agent.token, claim.task, offered(claim.task.next_actions, 'leases_heartbeat'));
    expect(beat.status, beat.body).toBe(200);
    // A heartbeat's answer is the lease; its hand-in names the task, its heartbeat does not name the lease.
    const lease = beat.json<Carrier>();
    expect(lease.next_actions.map(({ key: _key, ...action }) => action)).toEqual([
      { operation: 'leases_heartbeat' },
      { operation: 'tasks_hand_in', args: { lease_epoch: 1 }, fill: ['summary'] },
    ]);

    const handIn = await send(manifest, agent.token, lease, offered(lease.next_actions, 'tasks_hand_in'), { summary: 'Rotated; old keys revoked.' });
    expect(handIn.status, handIn.body).toBe(200);
    expect(handIn.json()).toMatchObject({ id: task.id, status: 'in_review' });

    const human = (await t.request('GET', '/api/v2?view=compact', { token: t.adminToken })).json<Manifest>();
    const review = (await t.request('GET', `/api/v2/tasks/${task.id}`, { token: t.adminToken })).json<Carrier & { version: number }>();
    const approve = review.next_actions.find((a) => a.operation === 'tasks_review' && a.args?.['decision'] === 'approve');
    expect(approve).toMatchObject({ expected_version: review.version, args: { decision: 'approve' } });
    const done = await send(human, t.adminToken, review, approve!);
    expect(done.status, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'done' });
  });

  it('view=full and fields keep every member; links point into v2', async () => {
    const task = await createTask(t, { title: 'Full view', labels: ['v2-full'] });
    const artifact = await t.request('POST', '/api/v1/artifacts', { body: { content: '{}', content_type: 'application/json', task_id: task.id, name: 'a.json' } });
    expect(artifact.status).toBe(201);
    const artifactId = artifact.json<{ id: string }>().id;
    const lean = (await t.request('GET', `/api/v2/tasks/${task.id}`)).json();
    validate('GET', `/api/v2/tasks/${task.id}`, 200, lean);
    // Not the default text type: the content type stays.
    expect(lean['artifacts']).toEqual([{ id: artifactId, name: 'a.json', size: 2, content_type: 'application/json' }]);
    const full = (await t.request('GET', `/api/v2/tasks/${task.id}?view=full`)).json();
    validate('GET', `/api/v2/tasks/${task.id}?view=full`, 200, full);
    expect(full).toMatchObject({ priority: 'normal', waiting_on: [] });
    const [ref] = full['artifacts'] as { sha256: string; href: string; content_type: string }[];
    expect(ref?.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(ref?.href).toBe(`/api/v2/artifacts/${artifactId}/content`);
    const content = await t.request('GET', ref?.href ?? '');
    expect(content.status).toBe(200);
    expect(content.body).toBe('{}');
    const picked = (await t.request('GET', `/api/v2/tasks/${task.id}?fields=priority,waiting_on`)).json();
    expect(picked).toMatchObject({ priority: 'normal', waiting_on: [] });
  });

  it('a list leaves out the same silent members, and a 201 says where the task lives in v2', async () => {
    const created = await t.request('POST', '/api/v2/tasks', { body: { title: 'Listed in v2', labels: ['v2-list'] } });
    expect(created.status, created.body).toBe(201);
    expect(created.headers['location']).toBe(`/api/v2/tasks/${created.json<{ id: string }>().id}`);
    validate('POST', '/api/v2/tasks', 201, created.json());
    const page = (await t.request('GET', '/api/v2/tasks?labels=v2-list')).json<{ data: Record<string, unknown>[] }>();
    validate('GET', '/api/v2/tasks?labels=v2-list', 200, page);
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).not.toHaveProperty('priority');
    expect(page.data[0]).not.toHaveProperty('waiting_on');
  });

  it('a key replays the same answer on either version, each in its own shape', async () => {
    const task = await createTask(t, { title: 'Replay across versions', labels: ['v2-replay'] });
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const first = await t.request('POST', `/api/v2/tasks/${task.id}/claim`, { token: agent.token, key: 'v2-replay-key', body: {} });
    expect(first.status, first.body).toBe(200);
    const again = await t.request('POST', `/api/v2/tasks/${task.id}/claim`, { token: agent.token, key: 'v2-replay-key', body: {} });
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.body).toBe(first.body);
    const inV1 = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, key: 'v2-replay-key', body: {} });
    expect(inV1.headers['idempotency-replayed']).toBe('true');
    const v1Task = inV1.json<{ task: { priority: string; next_actions: { href: string; headers: Record<string, string> }[] } }>().task;
    expect(v1Task.priority).toBe('normal');
    // The same stored answer: v1's href and the key v2 showed.
    const v2Task = first.json<{ task: { next_actions: NextActionV2[] } }>().task;
    expect(v1Task.next_actions.map((a) => a.headers['Idempotency-Key'])).toEqual(v2Task.next_actions.map((a) => a.key));
  });

  it('a problem on v2 names v2 routes in its hint, and an unknown v2 route is route_not_found, a known one with another method 405', async () => {
    const unknown = await t.request('GET', '/api/v2/nothing-here');
    expect(unknown.status).toBe(404);
    expect(unknown.json()).toMatchObject({ code: 'route_not_found' });
    const wrongMethod = await t.request('PUT', '/api/v2/tasks', { body: {} });
    expect(wrongMethod.status, wrongMethod.body).toBe(405);
    expect(wrongMethod.headers['allow']).toBe((await t.request('PUT', '/api/v1/tasks', { body: {} })).headers['allow']);
    const v1 = await t.request('GET', '/api/v1/tasks/tsk_00000000000000000000000000');
    const v2Missing = await t.request('GET', '/api/v2/tasks/tsk_00000000000000000000000000');
    expect(v2Missing.status).toBe(404);
    expect(v1.json<{ hint: string }>().hint).toBe('List tasks with GET /api/v1/tasks to find existing ids.');
    expect(v2Missing.json<{ hint: string }>().hint).toBe('List tasks with GET /api/v2/tasks to find existing ids.');
  });
});

describe('over MCP, /mcp?api=v2', () => {
  it('tools answer v2 tasks that match the listed v2 output schemas, and an agent follows their next_actions as tool calls', async () => {
    const baseUrl = await listen(t);
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await createTask(t, { title: 'Rotate the production keys', labels: ['v2-mcp'] });
    const client = await connectV2(baseUrl, agent.token, 'modern', 'api=v2&output_schemas=1');
    try {
      expect(client.getInstructions()).toContain('a `leases_*` tool takes the lease');
      const { tools } = await client.listTools();
      const ajv = new Ajv2020({ strict: false });
      const check = (name: string, result: unknown) => {
        const validate = ajv.compile(tools.find((tool) => tool.name === name)?.outputSchema ?? {});
        expect(validate(result), `${name}: ${JSON.stringify(validate.errors)}`).toBe(true);
      };
      const claimed = await client.callTool({ name: 'tasks_claim', arguments: { id: task.id } });
      const claim = outputOf<{ task: Carrier & { lease: { id: string } } }>(claimed);
      check('tasks_claim', claim);
      expect(claim.task).not.toHaveProperty('priority');
      expect(claim.task.lease).not.toHaveProperty('holder');
      // The rule of the instructions: the tool is `operation`, `id` the task's lease's for a leases_* tool, else the task's.
      const call = async (action: NextActionV2, carrier: Carrier, words: Record<string, string> = {}) => {
        const id = action.id ?? (action.operation.startsWith('leases_') ? carrier.lease?.id : carrier.id);
        const args = { ...action.args, ...words, id, ...(action.key ? { idempotency_key: action.key } : {}) };
        const result = await client.callTool({ name: action.operation, arguments: args });
        expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
        check(action.operation, outputOf(result));
        return outputOf<Record<string, unknown>>(result);
      };
      await call(offered(claim.task.next_actions, 'leases_heartbeat'), claim.task);
      const handedIn = await call(offered(claim.task.next_actions, 'tasks_hand_in'), claim.task, { summary: 'Rotated.' });
      expect(handedIn).toMatchObject({ id: task.id, status: 'in_review' });
    } finally {
      await client.close();
    }
  });

  it('refuses an unknown api version with a problem', async () => {
    const res = await t.request('POST', '/mcp?api=v3', { body: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { accept: 'application/json, text/event-stream' } });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_parameter' });
  });
});

describe('the v2 OpenAPI document', () => {
  it('serves every operation under /api/v2, v2 next actions, and is at most 200 KB', async () => {
    const res = await t.request('GET', '/api/v2/openapi.json', { token: null });
    const text = res.body;
    console.log(`[budget] GET /api/v2/openapi.json: ${Buffer.byteLength(text)} bytes (budget 204800)`);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(200 * 1024);
    expect(text).not.toContain('/api/v1');
    const v1 = (await t.request('GET', '/api/v1/openapi.json', { token: null })).json<OpenApiDocument>();
    const apiPaths = (doc: OpenApiDocument, prefix: string) => Object.keys(doc.paths).filter((p) => p.startsWith(prefix)).map((p) => p.slice(prefix.length)).sort();
    expect(apiPaths(v2, '/api/v2')).toEqual(apiPaths(v1, '/api/v1'));
    expect(Object.keys((v2.components.schemas['NextAction'] as { properties: object }).properties)).toEqual(['operation', 'id', 'key', 'expected_version', 'args', 'fill']);
  });

  it('passes Redocly CLI lint with 0 errors and 0 warnings', async () => {
    const lint = await redoclyLint(v2);
    expect(lint.problems).toEqual([]);
    expect(lint.totals).toMatchObject({ errors: 0, warnings: 0 });
    expect(lint.code).toBe(0);
  }, 60_000);
});
