import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { fetchDocument, withSchemasInlined } from '../openapi/openapi-document.ts';
import { createTask } from '../rest/fixtures.ts';
import { type FuzzRequest, fuzzRequest, type Known, prng, routes } from './fuzz-requests.ts';

/**
 * Requests generated from the OpenAPI document, most of them hostile (wrong types, huge strings,
 * unicode edge cases, nulls, extra fields, malformed JSON, wrong content types, deep nesting,
 * invalid ids and cursors, duplicate query parameters), to every route a request can finish. No
 * answer may be a 5xx, an error that is not a problem document, a stack trace or SQL text.
 * BATON_FUZZ_SEED reproduces a run (every run prints its seed); BATON_FUZZ_REQUESTS sets its length.
 */
const SEED = Number(process.env.BATON_FUZZ_SEED ?? randomInt(2 ** 31));
// 1,500 a run, each run with a new seed: the runs add up (BATON_FUZZ_REQUESTS=20000 for a long one).
const REQUESTS = Number(process.env.BATON_FUZZ_REQUESTS ?? 1500);

let t: TestServer;
beforeAll(async () => {
  // No delivery loop: the fuzz may create webhooks, whose deliveries are not what this tests.
  t = await startTestServer({ webhookIntervalMs: 0, sweepIntervalMs: 0, stripeWebhookSecret: 'whsec_fuzz_payments_0123456789', authWebhookSecret: `whsec_${Buffer.from('fuzz-auth-secret-0123456789abcd').toString('base64')}`, cronSecret: 'fuzz-cron-secret-0123456789' });
});
afterAll(() => t.close());

const STACK = /\n\s+at \S|node:internal|\.ts:\d+:\d+|\.js:\d+:\d+/;
const SQL = /\bselect\b[\s\S]{0,200}\bfrom\b|\binsert into\b|\bdelete from\b|\bupdate\s+"?\w+"?\s+set\b|syntax error at or near|violates \w+ ?\w* constraint|\brelation "|\bcolumn "|\bpg_\w+|kysely/i;

/** A JSON-RPC error object: what MCP answers a message it cannot take (spec/mcp.md). */
function isJsonRpcError(body: string): boolean {
  try {
    const message = JSON.parse(body) as { jsonrpc?: unknown; error?: { code?: unknown; message?: unknown } };
    return message.jsonrpc === '2.0' && typeof message.error?.code === 'number' && typeof message.error.message === 'string';
  } catch {
    return false;
  }
}

/** What is wrong with a problem document (as a body or as a GraphQL error's extensions), or null. */
function problemFault(problem: Record<string, unknown>, status: number): string | null {
  for (const member of ['type', 'title', 'code', 'detail', 'hint', 'retryable']) if (!(member in problem)) return `a problem without ${member}`;
  if (problem.status !== status) return `a problem whose status ${String(problem.status)} is not the response's ${status}`;
  return null;
}

/** A GraphQL response's errors each carry a problem in `extensions` (spec/graphql.md), the HTTP status when it is a 4xx. */
function graphqlFault(status: number, body: string): string | null {
  let errors: { extensions?: Record<string, unknown> }[] | undefined;
  try {
    errors = (JSON.parse(body) as { errors?: { extensions?: Record<string, unknown> }[] }).errors;
  } catch {
    return 'a GraphQL answer that is not JSON';
  }
  for (const error of errors ?? []) {
    const fault = problemFault(error.extensions ?? {}, status >= 400 ? status : Number(error.extensions?.status));
    if (fault) return `a GraphQL error with ${fault}`;
  }
  return status >= 400 && !errors?.length ? `status ${status} without errors` : null;
}

/** What is wrong with one answer, or null. */
function fault(path: string, status: number, contentType: string, body: string): string | null {
  if (status >= 500) return `status ${status}`;
  if (STACK.test(body)) return 'a stack trace in the body';
  if (SQL.test(body)) return 'SQL text in the body';
  if (path === '/graphql' && /^application\/(graphql-response\+)?json/.test(contentType)) return graphqlFault(status, body);
  if (status < 400) return null;
  if (path === '/mcp' && contentType.startsWith('application/json') && isJsonRpcError(body)) return null;
  if (!contentType.startsWith('application/problem+json')) return `status ${status} as ${contentType || 'no content type'}, not a problem document`;
  let problem: Record<string, unknown>;
  try {
    problem = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return 'a problem document that is not JSON';
  }
  return problemFault(problem, status);
}

/** The long-polls' wait parameters: `wait`'s `timeout_s` (30 s when absent), `asks_get`'s and `reservations_acquire`'s `wait_s`. */
const WAITS = ['timeout_s', 'wait_s'];

/**
 * A long-poll answers when something happens or its seconds run out, up to a minute for a valid
 * request here, where nothing happens. The fuzz has each wait that would hold (a number of seconds
 * above 0, however it is written) wait 0 instead, and gives `wait` a `timeout_s` of 0 when it has
 * none; every other value, hostile or not, is sent as made.
 */
function withoutWaiting(request: FuzzRequest): FuzzRequest {
  const [path = '', query] = request.url.split('?', 2);
  const holds = (value: string) => {
    try {
      return Number(decodeURIComponent(value).trim()) > 0;
    } catch {
      return false;
    }
  };
  const parameters = (query === undefined ? [] : query.split('&')).map((pair) => {
    const [name = '', value = ''] = pair.split('=', 2);
    return WAITS.includes(name) && holds(value) ? `${name}=0` : pair;
  });
  if (path.endsWith('/wait') && !parameters.some((pair) => pair.startsWith('timeout_s='))) parameters.push('timeout_s=0');
  let payload = request.payload;
  try {
    const body: unknown = payload === undefined ? undefined : JSON.parse(payload);
    if (body && typeof body === 'object' && 'wait_s' in body && Number(body.wait_s) > 0) payload = JSON.stringify({ ...body, wait_s: 0 });
  } catch {
    // Not JSON: nothing in it can wait.
  }
  return { ...request, url: parameters.length > 0 ? `${path}?${parameters.join('&')}` : path, ...(payload !== undefined ? { payload } : {}) };
}

const show = (request: FuzzRequest) =>
  JSON.stringify({ ...request, payload: request.payload && request.payload.length > 300 ? `${request.payload.slice(0, 300)}… (${request.payload.length} chars)` : request.payload });

it(`answers ${REQUESTS} generated hostile requests with no 5xx, only problem documents, no stack trace and no SQL`, { timeout: 600_000 }, async () => {
  console.log(`[fuzz] seed ${SEED} (BATON_FUZZ_SEED=${SEED} reproduces this run), ${REQUESTS} requests`);
  // Shared schemas inlined: each field's own bounds, enums and formats drive its values.
  const document = withSchemasInlined(await fetchDocument(t));
  const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:claim'] });
  const tasks = [await createTask(t, { title: 'fuzz one', labels: ['fuzz'] }), await createTask(t, { title: 'fuzz two' })];
  const events = (await t.request('GET', '/api/v1/events?limit=3')).json<{ data: { id: string }[] }>().data;
  const known: Known = { ids: [...tasks.map((task) => task.id), agent.id], eventIds: events.map((e) => e.id), token: t.adminToken, agentToken: agent.token };
  const all = routes(document);
  const r = prng(SEED);
  const failures: string[] = [];
  /** Whether this Authorization header still authenticates (whoami answers 200). */
  const stillGood = async (authorization: string | undefined) =>
    (await t.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: authorization ? { authorization } : {} })).statusCode === 200;
  const statuses = new Map<number, number>();
  const started = performance.now();
  for (let i = 0; i < REQUESTS && failures.length < 10; i += 1) {
    const route = all[Math.floor(r() * all.length)];
    if (!route) continue;
    const request = withoutWaiting(fuzzRequest(route, r, known));
    const res = await t.app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload !== undefined ? { payload: request.payload } : {}) });
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    let problem = fault(route.path, res.statusCode, String(res.headers['content-type'] ?? ''), res.body);
    // Every /api/v1 answer to a request made with a good token says the budget (spec/api.md, Rate limits).
    const tokened = [known.token, known.agentToken].some((token) => request.headers.authorization === `Bearer ${token}`);
    // The fuzz itself may revoke a token or disable its agent on the way (its writes are real); a
    // refused token gets no fields, so a missing budget counts only while the token still works.
    if (!problem && tokened && request.url.startsWith('/api/v1') && res.statusCode !== 401 && !res.headers.ratelimit && (await stillGood(request.headers.authorization))) {
      problem = `status ${res.statusCode} without the RateLimit fields`;
    }
    if (problem) failures.push(`#${i} ${route.method} ${route.path}: ${problem}\n  request: ${show(request)}\n  answer: ${res.body.slice(0, 500)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  console.log(`[fuzz] seed ${SEED}: ${REQUESTS} requests over ${all.length} routes in ${seconds.toFixed(1)} s; statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
  expect(failures, `seed ${SEED}: rerun with BATON_FUZZ_SEED=${SEED}`).toEqual([]);
  // The run reached past validation too: some requests succeeded.
  expect([...statuses.keys()].some((status) => status < 300)).toBe(true);
});

it('has a checker that does catch each kind of fault', () => {
  const problem = (status: number) => JSON.stringify({ type: 't', title: 't', status, code: 'c', detail: 'd', hint: 'h', retryable: false });
  expect(fault('/api/v1/tasks', 400, 'application/problem+json', problem(400))).toBeNull();
  expect(fault('/api/v1/tasks', 500, 'application/problem+json', problem(500))).toMatch(/status 500/);
  expect(fault('/api/v1/tasks', 400, 'application/json', '{"error":"bad"}')).toMatch(/not a problem/);
  expect(fault('/api/v1/tasks', 400, 'application/problem+json', problem(404))).toMatch(/status 404/);
  expect(fault('/api/v1/tasks', 200, 'application/json', '{"e":"TypeError: x\\n    at run (/app/src/x.ts:1:2)"}')).toMatch(/stack/);
  expect(fault('/api/v1/tasks', 400, 'application/problem+json', problem(400).replace('"d"', '"syntax error at or near \\"from\\""'))).toMatch(/SQL/);
  expect(fault('/api/v1/tasks', 200, 'application/json', '{"q":"select id from tasks where"}')).toMatch(/SQL/);
  expect(fault('/mcp', 400, 'application/json', '{"jsonrpc":"2.0","error":{"code":-32600,"message":"bad"},"id":null}')).toBeNull();
  expect(fault('/graphql', 200, 'application/json', '{"errors":[{"message":"x"}]}')).toMatch(/GraphQL error/);
});
