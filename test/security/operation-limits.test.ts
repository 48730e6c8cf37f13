import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql, type GraphqlResponse } from '../graphql/client.ts';

/**
 * The rate budget counts operations, not requests: each root field of a GraphQL mutation and each
 * `tools/call` of an MCP batch is one, all of them or none (spec/api.md, Rate limits). Tokens get a
 * budget of 20 a window; the server's clock is pinned 7 s into a window, so the reset is exactly 53 s.
 */

const LIMIT = 20;
const WINDOW_S = 60;
const OFFSET_S = 7;
const RESET_S = WINDOW_S - OFFSET_S;

/** A clock pinned 7 s into a rate window; `nextWindow` moves it to the same offset in the next one. */
function pinnedClock(): Clock & { nextWindow(): void } {
  const windowMs = WINDOW_S * 1000;
  let now = Math.floor(Date.now() / windowMs) * windowMs + OFFSET_S * 1000;
  return {
    now: () => new Date(now),
    nextWindow: () => {
      now += windowMs;
    },
  };
}

const clock = pinnedClock();

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer({ rateLimit: { limit: LIMIT, windowS: WINDOW_S }, sweepIntervalMs: 0 }, { clock });
  // The admin only checks what was written: lift its budget so the checks spend none of the window.
  const me = (await t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>();
  expect((await t.request('PATCH', `/api/v1/agents/${me.principal.id}`, { body: { rate_limit: 1_000_000 } })).status).toBe(200);
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

/** The `RateLimit` field's requests left, and the seconds to reset. */
function budget(headers: { get(name: string): string | null } | Record<string, unknown>): { r: number; t: number } {
  const value = typeof headers.get === 'function' ? (headers as { get(name: string): string | null }).get('ratelimit') : (headers as Record<string, unknown>)['ratelimit'];
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(value));
  expect(match, `RateLimit: ${String(value)}`).not.toBeNull();
  return { r: Number(match?.[1]), t: Number(match?.[2]) };
}

/** The titles of the tasks that exist with `prefix`, read through the API (by the admin unless `token` says otherwise). */
async function titlesStartingWith(prefix: string, token?: string): Promise<string[]> {
  const res = await t.request('GET', '/api/v1/tasks?limit=100', token === undefined ? {} : { token });
  expect(res.status, res.body).toBe(200);
  return res
    .json<{ data: { title: string }[] }>()
    .data.map((task) => task.title)
    .filter((title) => title.startsWith(prefix))
    .sort();
}

/** A mutation of `n` aliased `createTask` fields titled `<prefix> <i>`. */
function creations(prefix: string, n: number): string {
  return `mutation { ${Array.from({ length: n }, (_, i) => `t${i}: createTask(title: "${prefix} ${i}") { id }`).join(' ')} }`;
}

function expectRefused(res: GraphqlResponse, operations: number, left: number): void {
  expect(res.status, JSON.stringify(res.errors)).toBe(429);
  expect(res.data ?? undefined).toBeUndefined();
  expect(res.errors).toHaveLength(1);
  expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', status: 429, retryable: true, operations, remaining: left });
  expect(res.headers['retry-after']).toBe(String(RESET_S));
  expect(budget(res.headers)).toEqual({ r: left, t: RESET_S });
}

describe('GraphQL: each root field of a mutation is one operation of the budget', () => {
  it('refuses whole a document whose mutations exceed what is left (nothing written, one request spent), and runs one that fits, counting each field', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const prefix = `gql-${randomUUID()}`;

    expectRefused(await graphql(t, creations(prefix, 25), { token: agent.token }), 25, LIMIT - 1);
    expect(await titlesStartingWith(prefix)).toEqual([]);

    const five = await graphql<Record<string, { id: string }>>(t, creations(`${prefix} a`, 5), { token: agent.token });
    expect(five.status, JSON.stringify(five.errors)).toBe(200);
    expect(Object.keys(five.data ?? {})).toHaveLength(5);
    expect(budget(five.headers)).toEqual({ r: LIMIT - 1 - 5, t: RESET_S });

    // A query is one operation however many root fields it has.
    const read = await graphql(t, '{ a: whoami { principal { id } } b: whoami { principal { id } } c: tasks(limit: 1) { data { id } } }', { token: agent.token });
    expect(read.status, JSON.stringify(read.errors)).toBe(200);
    expect(budget(read.headers).r).toBe(LIMIT - 1 - 5 - 1);

    // 13 left: 14 mutations are refused whole, 12 (13 less the refusal) then fit exactly.
    expectRefused(await graphql(t, creations(`${prefix} b`, 14), { token: agent.token }), 14, 12);
    const fill = await graphql(t, creations(`${prefix} c`, 12), { token: agent.token });
    expect(fill.status, JSON.stringify(fill.errors)).toBe(200);
    expect(budget(fill.headers)).toEqual({ r: 0, t: RESET_S });
    const titles = await titlesStartingWith(prefix);
    expect(titles).toHaveLength(5 + 12);
    expect(titles.filter((title) => title.startsWith(`${prefix} b`))).toEqual([]);

    // Spent: a single mutation now meets the plain refusal.
    const over = await graphql(t, creations(`${prefix} d`, 1), { token: agent.token });
    expect(over.status).toBe(429);
    expect(await titlesStartingWith(`${prefix} d`)).toEqual([]);
  });

  it('says a document larger than the whole budget never fits', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const res = await graphql(t, creations(`never-${randomUUID()}`, LIMIT + 1), { token: agent.token });
    expectRefused(res, LIMIT + 1, LIMIT - 1);
    expect(res.errors?.[0]?.extensions['hint']).toMatch(new RegExp(`at most ${LIMIT} operations per request`));
  });

  it("refuses whole a document that fits the token's budget but not its workspace's shared one", async () => {
    const made = (await t.request('POST', '/api/v1/workspaces', { body: { name: `Omega ${randomUUID()}` } })).json<{ token: string }>();
    expect((await t.request('PATCH', '/api/v1/workspaces/current', { token: made.token, body: { rate_limit: 6 } })).status).toBe(200);
    const prefix = `shared-${randomUUID()}`;
    const five = await graphql(t, creations(`${prefix} a`, 5), { token: made.token });
    expect(five.status, JSON.stringify(five.errors)).toBe(200);
    expect(budget(five.headers)).toEqual({ r: 1, t: RESET_S });
    const two = await graphql(t, creations(`${prefix} b`, 2), { token: made.token });
    expect(two.status).toBe(429);
    expect(two.errors?.[0]?.extensions).toMatchObject({ code: 'rate_limited', operations: 2, remaining: 0 });
    expect(two.headers['ratelimit-policy']).toBe(`"default";q=6;w=${WINDOW_S}`);
    const seven = await graphql(t, creations(`${prefix} c`, 7), { token: made.token });
    expect(seven.status).toBe(429);
    clock.nextWindow();
    expect(await titlesStartingWith(prefix, made.token)).toEqual(Array.from({ length: 5 }, (_, i) => `${prefix} a ${i}`).sort());
    const never = await graphql(t, creations(`${prefix} d`, 7), { token: made.token });
    expect(never.errors?.[0]?.extensions['hint']).toMatch(/at most 6 operations per request/);
  });

  it('counts a mutation\'s fields through fragments and inline fragments, and refuses one larger than a whole window\'s budget with a hint to split it', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const prefix = `frag-${randomUUID()}`;
    // 11 + 10 fields through fragments: more than the token's whole budget (20), so never in one request.
    const half = (from: number, n: number) => Array.from({ length: n }, (_, i) => `t${from + i}: createTask(title: "${prefix} ${from + i}") { id }`).join(' ');
    const spread = await graphql(t, `mutation { ...More ... on Mutation { ${half(0, 11)} } } fragment More on Mutation { ${half(11, 10)} }`, { token: agent.token });
    expectRefused(spread, 21, LIMIT - 1);
    expect(spread.errors?.[0]?.extensions['hint']).toMatch(/split the document or batch/);
    expect(await titlesStartingWith(prefix)).toEqual([]);
  });

  it('does not count the fields @skip or @include leave out with the request\'s variables (as execution leaves them out)', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const prefix = `dir-${randomUUID()}`;
    const field = (i: number, directive = '') => `t${i}: createTask(title: "${prefix} ${i}") ${directive} { id }`;
    const document = `mutation Make($skip: Boolean!, $include: Boolean!) {
      ${field(0)} ${field(1, '@skip(if: $skip)')} ${field(2, '@include(if: $include)')}
      ... @include(if: false) { ${field(3)} }
    }`;
    const one = await graphql(t, document, { token: agent.token, variables: { skip: true, include: false } });
    expect(one.status, JSON.stringify(one.errors)).toBe(200);
    expect(budget(one.headers)).toEqual({ r: LIMIT - 1, t: RESET_S });
    expect(await titlesStartingWith(prefix)).toEqual([`${prefix} 0`]);
    const three = await graphql(t, document.replaceAll(prefix, `${prefix}b`), { token: agent.token, variables: { skip: false, include: true } });
    expect(three.status, JSON.stringify(three.errors)).toBe(200);
    expect(budget(three.headers)).toEqual({ r: LIMIT - 4, t: RESET_S });
    expect(await titlesStartingWith(`${prefix}b`)).toEqual([`${prefix}b 0`, `${prefix}b 1`, `${prefix}b 2`]);
  });
});

/** POSTs a JSON-RPC batch to /mcp as a 2025-03-26 client would (the last revision with batches). */
async function mcpBatch(token: string, messages: object[]): Promise<Response> {
  return fetch(new URL('/mcp', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-03-26',
    },
    body: JSON.stringify(messages),
  });
}

function toolCalls(prefix: string, n: number): object[] {
  return Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'tools/call', params: { name: 'tasks_create', arguments: { title: `${prefix} ${i}` } } }));
}

describe('MCP: each tools/call of a JSON-RPC batch is one operation of the budget', () => {
  it('refuses whole a batch whose calls exceed what is left (HTTP 429 problem, nothing written), and runs one that fits, counting each call', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const prefix = `mcp-${randomUUID()}`;

    const refused = await mcpBatch(agent.token, toolCalls(prefix, 25));
    expect(refused.status).toBe(429);
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await refused.json()).toMatchObject({ code: 'rate_limited', retryable: true, operations: 25, remaining: LIMIT - 1 });
    expect(refused.headers.get('retry-after')).toBe(String(RESET_S));
    expect(budget(refused.headers)).toEqual({ r: LIMIT - 1, t: RESET_S });
    expect(await titlesStartingWith(prefix)).toEqual([]);

    // A batch that fits runs every call; a notification beside them costs nothing.
    const fits = await mcpBatch(agent.token, [...toolCalls(`${prefix} a`, 5), { jsonrpc: '2.0', method: 'notifications/initialized' }]);
    expect(fits.status).toBe(200);
    expect(budget(fits.headers)).toEqual({ r: LIMIT - 1 - 5, t: RESET_S });
    await fits.text();
    expect(await titlesStartingWith(`${prefix} a`)).toHaveLength(5);

    // One call alone is one operation, as before.
    const single = await mcpBatch(agent.token, toolCalls(`${prefix} b`, 1));
    expect(budget(single.headers).r).toBe(LIMIT - 1 - 5 - 1);
    await single.text();
  });
});
