import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/domain/scopes.ts';
import { createIds, type IdPrefix } from '../../src/ids.ts';
import { linkKey, newLinkId, signLink } from '../../src/notification-link.ts';
import { isCallable, type Operation } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import { readCursorKey } from '../../src/store/server-keys.ts';
import { DEFAULT_WORKSPACE_ID } from '../../src/store/workspace-scope.ts';
import { graphql, subscribeGraphql } from '../graphql/client.ts';
import { graphqlRequest } from '../graphql/requests.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { CRON_SECRET, pollUntil } from '../leases/instances.ts';
import { asMcpClient, connectV2, listen, type McpClient } from '../mcp/clients.ts';
import { type Answer, mcpAnswer, normalized, toolArguments } from '../mcp/parity.ts';
import { type Receiver, startReceiver } from '../realtime/receiver.ts';
import { subscribe } from '../realtime/sse-client.ts';
import { type Fixtures, makeFixtures, type OperationRequest, operationRequests, sendOperation } from './operation-requests.ts';
import { idsIn, idsInText, ownIds, rowsOf } from './workspace-rows.ts';

/**
 * Workspaces (issue 39 §4): nothing of one workspace is visible, countable, guessable or changeable
 * from another. Workspace A (the default one) holds the authorization matrix's fixtures; the owner
 * of workspace B (every scope, a human) calls every operation of the registry with the request
 * built against A's objects, over REST, MCP and GraphQL. Each answer is the one the same request
 * gets naming objects that do not exist (ghosts: fresh ids of the same kinds), an object in the
 * path answers 404, no answer carries an id of A's rows or A's marker text, and A's rows are, at
 * the end, byte for byte as they were. Then: every gated operation as an agent of B; /metrics;
 * A's names and Idempotency-Keys reused in B; B's stream, GraphQL subscription and webhook.
 */

let t: TestServer;
let base: string;
let mcp: McpClient;
/** A's fixtures, and the same shape made of ids that exist nowhere. */
let fx: Fixtures;
let ghost: Fixtures;
let b: { id: string; token: string; ownerId: string };
/** An agent of B's with every scope: its gated calls ask B's owner for an approval. */
let bAgent: string;
/** A task and a webhook of B's, for requests that name A's objects beside them. */
let bTask: string;
let bWebhook: string;
/** Every id A's rows hold (theirs and those they point at), and text only A's rows contain. */
let aIds: Set<string>;
const marker = `a-only-${randomUUID()}`;
let aBefore: Record<string, string>;

const A = DEFAULT_WORKSPACE_ID;

beforeAll(async () => {
  t = await startTestServer({ rateLimit: { limit: 100_000, windowS: 3600 }, sweepIntervalMs: 0, webhookIntervalMs: 0, cronSecret: CRON_SECRET });
  fx = await makeFixtures(t);
  const task = await t.request('POST', '/api/v1/tasks', { body: { title: `Task ${marker}`, description: marker, labels: ['a-only'] } });
  expect(task.status, task.body).toBe(201);
  const taskId = task.json<{ id: string }>().id;
  expect((await t.request('POST', `/api/v1/tasks/${taskId}/comments`, { body: { body: `Comment ${marker}` } })).status).toBe(201);
  expect((await t.request('POST', '/api/v1/artifacts', { body: { content: `Artifact ${marker}`, task_id: taskId } })).status).toBe(201);
  const made = await t.request('POST', '/api/v1/workspaces', { body: { name: `B ${randomUUID()}` } });
  expect(made.status, made.body).toBe(201);
  const body = made.json<{ workspace: { id: string }; owner_id: string; token: string }>();
  b = { id: body.workspace.id, token: body.token, ownerId: body.owner_id };
  const own = await t.request('POST', '/api/v1/tasks', { token: b.token, body: { title: "B's own task" } });
  expect(own.status, own.body).toBe(201);
  bTask = own.json<{ id: string }>().id;
  const hook = await t.request('POST', '/api/v1/webhooks', { token: b.token, body: { url: 'http://127.0.0.1:9/b', enabled: false } });
  expect(hook.status, hook.body).toBe(201);
  bWebhook = hook.json<{ id: string }>().id;
  const agent = await t.request('POST', '/api/v1/agents', { token: b.token, body: { name: 'b-agent', scopes: SCOPES } });
  expect(agent.status, agent.body).toBe(201);
  const issued = await t.request('POST', `/api/v1/agents/${agent.json<{ id: string }>().id}/tokens`, { token: b.token, body: { machine: 'b-machine' } });
  expect(issued.status, issued.body).toBe(201);
  bAgent = issued.json<{ token: string }>().token;
  ghost = await ghostsOf(fx);
  // A's rows name B's workspace and owner (A's owner made them, in A's workspace.created event): those are B's.
  const bOwn = await ownIds(t.database.db, b.id);
  aIds = new Set([...(await idsIn(t.database.db, A))].filter((id) => !bOwn.has(id) && id !== b.id));
  aBefore = await rowsOf(t.database.db, A);
  base = await listen(t);
  mcp = asMcpClient(await connectV2(base, b.token, 'modern'));
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

/** The fixtures by name: every member is an id, or the link. */
function entries(fixtures: Fixtures): [string, string][] {
  return Object.entries(fixtures as unknown as Record<string, string>);
}

/** The fixtures' shape, every id replaced by a fresh one of its kind, and a link signed for nobody. */
async function ghostsOf(real: Fixtures): Promise<Fixtures> {
  const ids = createIds();
  const fresh = (id: string) => ids.make(id.slice(0, id.indexOf('_')) as IdPrefix);
  const made = Object.fromEntries(entries(real).map(([key, value]) => [key, key === 'link' ? '' : fresh(value)])) as unknown as Fixtures;
  const link = signLink(linkKey(await readCursorKey(t.database.db)), { id: newLinkId(), to: made.admin, task: made.task, item: 'inb_fixture', exp: Math.floor(Date.now() / 1000) + 86_400 });
  return { ...made, link };
}

/** What of A's an answer carries: ids of A's rows, or A's marker text. */
function leaked(text: string): string[] {
  const ids = [...new Set(idsInText(text))].filter((id) => aIds.has(id));
  return text.includes(marker) ? [...ids, marker] : ids;
}

/** Whether the request names one of A's objects (then it is compared with the same request naming ghosts). */
function namesA(request: OperationRequest): boolean {
  const text = JSON.stringify(request);
  return entries(fx).some(([, value]) => text.includes(value));
}

/** The answer with A's link and the ghost's made alike (ids, times and keys `normalized` already evens out). */
function comparable(answer: Answer, fixtures: Fixtures): string {
  return normalized(answer).replaceAll(fixtures.link, 'LINK');
}

/**
 * More requests naming A's objects where the matrix's request names none (filters, references in a
 * body, a cursor's start), or beside an object of B's so that the refusal is about A's.
 */
const ALSO: Readonly<Record<string, readonly ((fx: Fixtures) => OperationRequest)[]>> = {
  tasks_create: [
    (f) => ({ body: { title: 'refers to A', blocked_by: [f.task] } }),
    (f) => ({ body: { title: 'refers to A', parent_id: f.task } }),
    (f) => ({ body: { title: 'refers to A', assignee: f.agent } }),
  ],
  tasks_list: [
    (f) => ({ query: `assignee=${f.agent}` }),
    (f) => ({ query: `parent=${f.task}` }),
    (f) => ({ query: `since=${f.event}` }),
    (f) => ({ query: `id_prefix=${f.task.slice(4, 14)}` }),
    () => ({ query: `q=${marker}` }),
  ],
  tasks_update: [(f) => ({ params: { id: bTask }, body: { blocked_by: [f.task] } }), (f) => ({ params: { id: bTask }, body: { parent_id: f.task } })],
  tasks_assign: [(f) => ({ params: { id: bTask }, body: { assignee: f.agent } })],
  comments_create: [(f) => ({ params: { id: bTask }, body: { body: `Over to @${f.admin}` } })],
  asks_create: [(f) => ({ params: { id: bTask }, body: { question: 'Ship it?', options: [{ label: 'yes' }], to: f.admin, timeout_s: 600, default: { option: 'yes' } } })],
  events_list: [(f) => ({ query: `since=${f.event}` }), (f) => ({ query: `subject=${f.task}` }), (f) => ({ query: `actor=${f.admin}` })],
  events_stream: [(f) => ({ query: `since=${f.event}` })],
  reservations_acquire: [(f) => ({ body: { resource: `b-${randomUUID()}`, task_id: f.task } })],
  artifacts_create: [(f) => ({ body: { content: 'refers to A', task_id: f.heldTask } })],
  webhooks_replay: [(f) => ({ params: { id: bWebhook }, query: `since=${f.event}`, body: {} })],
};

type Via = (request: OperationRequest) => Promise<Answer & { status?: number }>;

/** Sends the operation's request on A's objects, and on ghosts where it names any; returns what leaked. */
async function probe(operation: Operation, build: (fx: Fixtures) => OperationRequest, interface_: string, via: Via): Promise<string[]> {
  const request = build(fx);
  const real = await via(request);
  const at = `${operation.name} over ${interface_}`;
  const found: string[] = [];
  const text = JSON.stringify(real.body);
  if (real.status !== undefined && real.status >= 500) found.push(`${at}: ${real.status} ${text.slice(0, 300)}`);
  if (real.ok) found.push(...leaked(text).map((what) => `${at}: answered with A's ${what}: ${text.slice(0, 300)}`));
  if (!namesA(request)) return found;
  const inPath = Object.values(request.params ?? {}).some((value) => entries(fx).some(([, id]) => id === value));
  if (inPath && real.status !== undefined && real.status !== 404) found.push(`${at}: ${real.status} for A's object in the path, not 404: ${text.slice(0, 300)}`);
  const none = await via(build(ghost));
  if (comparable(real, fx) !== comparable(none, ghost)) {
    found.push(`${at}: answers A's objects otherwise than ids that exist nowhere:\n  A's:   ${comparable(real, fx).slice(0, 400)}\n  ghost: ${comparable(none, ghost).slice(0, 400)}`);
  }
  return found;
}

async function viaRest(operation: Operation, request: OperationRequest, token = b.token): Promise<Answer & { status: number }> {
  if (operation.kind === 'stream') {
    // A stream never ends: its head says whether it opened.
    const query = request.query ? `?${request.query}` : '';
    const res = await t.app.inject({ method: 'GET', url: `/api/v1${operation.http.path}${query}`, headers: { authorization: `Bearer ${token}` }, payloadAsStream: true });
    res.stream().destroy();
    return { ok: res.statusCode < 400, status: res.statusCode, body: null };
  }
  const res = await sendOperation(t, operation, request, token);
  return { ok: res.status < 400, status: res.status, body: res.body === '' ? null : res.json() };
}

async function viaGraphql(operation: Operation, request: OperationRequest): Promise<Answer> {
  const { query, variables } = graphqlRequest(operation, request);
  const res = await graphql(t, query, { variables, token: b.token });
  if (res.errors) return { ok: false, body: res.errors.map((e) => e.extensions) };
  return { ok: true, body: res.data };
}

describe("every operation, called by workspace B's owner on workspace A's objects", () => {
  for (const operation of operations) {
    it(operation.name, async () => {
      const build = operationRequests[operation.name];
      if (!build) expect.fail(`${operation.name} has no request in test/security/operation-requests.ts: add one so this probe covers it`);
      const found: string[] = [];
      for (const request of [build, ...(ALSO[operation.name] ?? [])]) {
        found.push(...(await probe(operation, request, 'REST', (r) => viaRest(operation, r))));
        // Streams are not tools, and GraphQL serves them as subscriptions (the stream is probed below).
        if (!isCallable(operation)) continue;
        found.push(...(await probe(operation, request, 'MCP', async (r) => mcpAnswer(await mcp.callTool(operation.name, toolArguments(r))))));
        found.push(...(await probe(operation, request, 'GraphQL', (r) => viaGraphql(operation, r))));
      }
      expect(found).toEqual([]);
    });
  }
});

describe("every gated operation, asked by B's agent on A's objects", () => {
  const gated = operations.filter((op) => op.approval !== 'none');

  it('answers as for ids that exist nowhere (no approval told apart), and approving what B asked touches nothing of A', async () => {
    expect(gated.length).toBeGreaterThan(0);
    const found: string[] = [];
    for (const operation of gated) {
      const build = operationRequests[operation.name];
      if (build) found.push(...(await probe(operation, build, "REST, by B's agent", (r) => viaRest(operation, r, bAgent))));
    }
    const pending = await t.request('GET', '/api/v1/approvals?status=pending&limit=100', { token: b.token });
    for (const { id } of pending.json<{ data: { id: string }[] }>().data) {
      const approved = await t.request('POST', `/api/v1/approvals/${id}/approve`, { token: b.token, body: {} });
      if (approved.status >= 500) found.push(`approving ${id}: ${approved.status} ${approved.body}`);
      found.push(...leaked(approved.body).map((what) => `approving ${id} answered with A's ${what}: ${approved.body.slice(0, 300)}`));
    }
    expect(found).toEqual([]);
  });
});

describe('/metrics, the whole server\'s figures', () => {
  it("is refused to B's owner (it would count A's tasks and requests), and served to A's", async () => {
    const refused = await t.request('GET', '/metrics', { token: b.token });
    expect(refused.status, refused.body).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden_scope' });
    expect(refused.body).not.toContain('baton_tasks');
    expect((await t.request('GET', '/metrics')).status).toBe(200);
  });
});

describe('workspace A, after the probe', () => {
  it('is row for row as it was', async () => {
    expect(await rowsOf(t.database.db, A)).toEqual(aBefore);
    // And as A's owner reads it.
    for (const id of [fx.task, fx.heldTask, fx.reviewTask, fx.deadTask]) expect((await t.request('GET', `/api/v1/tasks/${id}`)).status).toBe(200);
  });
});

describe("names and keys A uses are B's to use too, and tell B nothing", () => {
  it("takes A's agent, template, schedule and budget names, A's reserved resource and A's Idempotency-Key as new in B", async () => {
    const resource = (await t.request('GET', `/api/v1/reservations/${fx.reservation}`)).json<{ resource: string }>().resource;
    const key = randomUUID();
    expect((await t.request('POST', '/api/v1/tasks', { body: { title: `Keyed ${marker}` }, key })).status).toBe(201);
    const before = await rowsOf(t.database.db, A);
    for (const [url, body] of [
      ['/api/v1/agents', { name: 'fixture-agent', scopes: ['tasks:read'] }],
      ['/api/v1/templates', { name: 'fixture template', parameters: [{ name: 'what' }], tasks: [{ key: 'one', title: 'B {{what}}' }] }],
      ['/api/v1/schedules', { name: 'fixture schedule', cron: '0 9 * * *', task: { title: 'B' }, enabled: false }],
      ['/api/v1/budgets', { name: 'fixture budget', applies_to: 'label', target: 'fixture-budget', unit: 'runs', limit: 1000 }],
      ['/api/v1/reservations', { resource }],
    ] as const) {
      const res = await t.request('POST', url, { token: b.token, body });
      expect(res.status, `${url}: ${res.body}`).toBe(201);
      expect(leaked(res.body), url).toEqual([]);
    }
    // The same key from B's owner is B's own first use of it, not a replay of A's answer.
    const keyed = await t.request('POST', '/api/v1/tasks', { token: b.token, body: { title: 'Keyed in B' }, key });
    expect(keyed.status, keyed.body).toBe(201);
    expect(keyed.json()).toMatchObject({ title: 'Keyed in B' });
    expect(await rowsOf(t.database.db, A)).toEqual(before);
  });
});

describe("B's stream and webhooks", () => {
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(() => receiver.close());

  it("yields B's events only, over SSE and as a GraphQL subscription, while A writes too", async () => {
    const stream = await subscribe(`${base}/api/v1/events/stream?types=task.created,task.updated`, b.token, ['task.created', 'task.updated']);
    const subscription = await subscribeGraphql(base, 'subscription { events(types: "task.created,task.updated") { id type subject } }', b.token);
    try {
      expect(subscription.status).toBe(200);
      const ours = await t.request('POST', '/api/v1/tasks', { body: { title: `Streamed ${marker}` } });
      expect((await t.request('PATCH', `/api/v1/tasks/${ours.json<{ id: string }>().id}`, { body: { title: `Renamed ${marker}` } })).status).toBe(200);
      const theirs = await t.request('POST', '/api/v1/tasks', { token: b.token, body: { title: 'Streamed in B' } });
      expect(theirs.status, theirs.body).toBe(201);
      const id = theirs.json<{ id: string }>().id;
      // The timeline is in order: had A's events leaked, they would have come before B's.
      await stream.waitFor(1, 20_000);
      expect(stream.received.map((e) => [e.event, e.data.subject])).toEqual([['task.created', id]]);
      expect((await subscription.next<{ data: { events: { type: string; subject: string } } }>()).data.events).toMatchObject({ type: 'task.created', subject: id });
    } finally {
      stream.close();
      subscription.close();
    }
  });

  it("delivers B's events to B's webhook and A's to A's, none across", async () => {
    for (const [path, token] of [['/a', t.adminToken], ['/b', b.token]] as const) {
      const res = await t.request('POST', '/api/v1/webhooks', { token, body: { url: `${receiver.url}${path}`, event_types: ['task.created'] } });
      expect(res.status, res.body).toBe(201);
      receiver.trust(path, res.json<{ secret: string }>().secret);
    }
    const inA = (await t.request('POST', '/api/v1/tasks', { body: { title: `Hooked ${marker}` } })).json<{ id: string }>().id;
    const inB = (await t.request('POST', '/api/v1/tasks', { token: b.token, body: { title: 'Hooked in B' } })).json<{ id: string }>().id;
    const got = (path: string) => receiver.deliveries.filter((d) => d.path === path).map((d) => [d.body.subject, d.verified]);
    // One maintenance pass delivers for every workspace, each bound to its own (once the events are settled).
    await pollUntil(async () => {
      const res = await t.request('POST', '/cron/keepalive', { token: null, headers: { authorization: `Bearer ${CRON_SECRET}` }, key: null });
      expect(res.status, res.body).toBe(200);
      return got('/a').length > 0 && got('/b').length > 0 ? true : undefined;
    }, 20_000, 'a delivery to each webhook');
    expect(got('/a')).toEqual([[inA, true]]);
    expect(got('/b')).toEqual([[inB, true]]);
  });
});
