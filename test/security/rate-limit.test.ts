import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { loadConfig } from '../../src/config.ts';
import { createServer, type Server } from '../../src/server.ts';
import { type Database, openPostgres } from '../../src/store/database.ts';
import { engine, freshDatabase, startTestServer, testConfig } from '../harness.ts';

/**
 * Per-token rate limits through HTTP. The servers run on a clock the test moves by hand, pinned 7 s
 * into a rate window: the seconds to reset are exactly known (53), and no window can close in the
 * middle of a count however slowly a loaded machine runs the test.
 */

const LIMIT = 20;
const WINDOW_S = 60;
const OFFSET_S = 7;
const RESET_S = WINDOW_S - OFFSET_S;
const POLICY = `"default";q=${LIMIT};w=${WINDOW_S}`;

interface TestClock extends Clock {
  /** Moves time forward; `WINDOW_S` lands at the same offset in the next window. */
  advance(seconds: number): void;
}

function windowClock(): TestClock {
  const windowMs = WINDOW_S * 1000;
  let now = Math.floor(Date.now() / windowMs) * windowMs + OFFSET_S * 1000;
  return {
    now: () => new Date(now),
    advance: (seconds) => {
      now += seconds * 1000;
    },
  };
}

const rateConfig = () => testConfig({ rateLimit: { limit: LIMIT, windowS: WINDOW_S }, sweepIntervalMs: 0 });

interface Reply {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json: <T = Record<string, unknown>>() => T;
}

/** One request through `inject`; writes get a fresh Idempotency-Key. */
async function call(app: FastifyInstance, token: string, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: object): Promise<Reply> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (method !== 'GET') headers['idempotency-key'] = randomUUID();
  const res = await app.inject({ method, url, headers, ...(body ? { payload: body } : {}) });
  return { status: res.statusCode, headers: res.headers, body: res.body, json: <T>() => JSON.parse(res.body) as T };
}

/** The `RateLimit` field of a response: remaining requests and seconds to reset. */
function budget(res: Reply): { r: number; t: number } {
  const match = /^"default";r=(\d+);t=(\d+)$/.exec(String(res.headers.ratelimit));
  expect(match, `RateLimit: ${String(res.headers.ratelimit)}`).not.toBeNull();
  return { r: Number(match?.[1]), t: Number(match?.[2]) };
}

function expectRateLimited(res: Reply, limit: number): void {
  expect(res.status, res.body).toBe(429);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ status: 429, code: 'rate_limited', retryable: true });
  expect(res.headers['ratelimit-policy']).toBe(`"default";q=${limit};w=${WINDOW_S}`);
  const { r, t } = budget(res);
  expect(r).toBe(0);
  expect(t).toBe(RESET_S);
  expect(res.headers['retry-after']).toBe(String(t));
}

/** A principal with the given token count, made by the admin; returns its id and tokens. */
async function agentWithTokens(app: FastifyInstance, admin: string, count: number, extra: object = {}): Promise<{ id: string; tokens: string[] }> {
  const made = await call(app, admin, 'POST', '/api/v1/agents', { name: 'limited', scopes: ['tasks:read', 'tasks:write'], ...extra });
  expect(made.status, made.body).toBe(201);
  const id = made.json<{ id: string }>().id;
  const tokens: string[] = [];
  for (let i = 0; i < count; i++) {
    const issued = await call(app, admin, 'POST', `/api/v1/agents/${id}/tokens`, { machine: `m${i}` });
    expect(issued.status, issued.body).toBe(201);
    tokens.push(issued.json<{ token: string }>().token);
  }
  return { id, tokens };
}

/** Lifts the admin's own budget, so setting up fixtures never spends the budgets under test. */
async function unlimitAdmin(app: FastifyInstance, admin: string): Promise<void> {
  const me = (await call(app, admin, 'GET', '/api/v1/whoami')).json<{ principal: { id: string } }>();
  const res = await call(app, admin, 'PATCH', `/api/v1/agents/${me.principal.id}`, { rate_limit: 1_000_000 });
  expect(res.status, res.body).toBe(200);
}

describe('the default policy', () => {
  it('is 600 requests per 60 s (BATON_RATE_LIMIT unset), announced on every authenticated response', async () => {
    const t = await startTestServer({ rateLimit: loadConfig({}).rateLimit });
    try {
      const res = await t.request('GET', '/api/v1/tasks');
      expect(res.headers['ratelimit-policy']).toBe('"default";q=600;w=60');
      expect(res.headers.ratelimit).toMatch(/^"default";r=\d+;t=\d+$/);
    } finally {
      await t.close();
    }
  });
});

describe(`one instance, ${LIMIT} requests per ${WINDOW_S} s`, () => {
  let server: Server;
  let app: FastifyInstance;
  let admin: string;
  const clock = windowClock();

  beforeAll(async () => {
    const { database } = await freshDatabase();
    server = await createServer(rateConfig(), { database, clock });
    app = server.app;
    admin = server.bootstrapToken ?? '';
    await unlimitAdmin(app, admin);
  });
  afterAll(() => server.close());

  it('counts r down exactly to 0 over every kind of answer, then 429 rate_limited with Retry-After = t; nothing runs', async () => {
    const { tokens } = await agentWithTokens(app, admin, 1);
    const token = tokens[0] ?? '';
    const requests: (() => Promise<Reply>)[] = [
      () => call(app, token, 'GET', '/api/v1/tasks'),
      () => call(app, token, 'GET', '/api/v1/whoami'),
      () => call(app, token, 'POST', '/api/v1/tasks', { title: 'counted' }),
      () => call(app, token, 'GET', '/api/v1/tasks/tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV'), // 404
      () => call(app, token, 'GET', '/api/v1/agents'), // 403 forbidden_scope
      () => call(app, token, 'POST', '/api/v1/tasks', { title: '' }), // 400
    ];
    for (let i = 0; i < LIMIT; i++) {
      const send = requests[i % requests.length];
      if (!send) throw new Error('no request');
      const res = await send();
      expect(res.status, res.body).toBeLessThan(500);
      expect(res.headers['ratelimit-policy']).toBe(POLICY);
      expect(budget(res), `request ${i + 1}`).toEqual({ r: LIMIT - 1 - i, t: RESET_S });
    }
    const tasksBefore = await server.database.db.selectFrom('tasks').select('id').execute();
    expectRateLimited(await call(app, token, 'POST', '/api/v1/tasks', { title: 'over budget' }), LIMIT);
    expectRateLimited(await call(app, token, 'GET', '/api/v1/whoami'), LIMIT);
    expect(await server.database.db.selectFrom('tasks').select('id').execute()).toEqual(tasksBefore);
  });

  it('gives every token its own budget, even two tokens of one agent', async () => {
    const spent = await agentWithTokens(app, admin, 2);
    const [first = '', second = ''] = spent.tokens;
    for (let i = 0; i < LIMIT; i++) expect((await call(app, first, 'GET', '/api/v1/tasks')).status).toBe(200);
    expectRateLimited(await call(app, first, 'GET', '/api/v1/tasks'), LIMIT);
    const sibling = await call(app, second, 'GET', '/api/v1/tasks');
    expect(sibling.status).toBe(200);
    expect(budget(sibling).r).toBe(LIMIT - 1);
    const other = (await agentWithTokens(app, admin, 1)).tokens[0] ?? '';
    const res = await call(app, other, 'GET', '/api/v1/tasks');
    expect(res.status).toBe(200);
    expect(budget(res).r).toBe(LIMIT - 1);
  });

  it("uses the agent's own rate_limit over the default, at once", async () => {
    const agent = await agentWithTokens(app, admin, 2);
    const patch = await call(app, admin, 'PATCH', `/api/v1/agents/${agent.id}`, { rate_limit: 5 });
    expect(patch.status, patch.body).toBe(200);
    for (const token of agent.tokens) {
      for (let i = 0; i < 5; i++) {
        const res = await call(app, token, 'GET', '/api/v1/tasks');
        expect(res.status).toBe(200);
        expect(res.headers['ratelimit-policy']).toBe(`"default";q=5;w=${WINDOW_S}`);
        expect(budget(res)).toEqual({ r: 4 - i, t: RESET_S });
      }
      expectRateLimited(await call(app, token, 'GET', '/api/v1/tasks'), 5);
    }
    const restore = await call(app, admin, 'PATCH', `/api/v1/agents/${agent.id}`, { rate_limit: null });
    expect(restore.status, restore.body).toBe(200);
    const res = await call(app, agent.tokens[0] ?? '', 'GET', '/api/v1/tasks');
    expect(res.status, res.body).toBe(200);
    expect(res.headers['ratelimit-policy']).toBe(POLICY);

    const created = await agentWithTokens(app, admin, 1, { rate_limit: 7 });
    const first = await call(app, created.tokens[0] ?? '', 'GET', '/api/v1/tasks');
    expect(first.headers['ratelimit-policy']).toBe(`"default";q=7;w=${WINDOW_S}`);
    expect(budget(first).r).toBe(6);
  });

  it('restores the budget when the window closes', async () => {
    const token = (await agentWithTokens(app, admin, 1)).tokens[0] ?? '';
    for (let i = 0; i < LIMIT; i++) expect((await call(app, token, 'GET', '/api/v1/tasks')).status).toBe(200);
    expectRateLimited(await call(app, token, 'GET', '/api/v1/tasks'), LIMIT);
    clock.advance(WINDOW_S);
    const res = await call(app, token, 'GET', '/api/v1/tasks');
    expect(res.status, res.body).toBe(200);
    expect(budget(res)).toEqual({ r: LIMIT - 1, t: RESET_S });
  });
});

describe.skipIf(engine === 'pglite')('two instances on one database (PostgreSQL only: PGlite is single-process, so two servers cannot share it)', () => {
  const servers: Server[] = [];
  let store: Database;
  let admin: string;
  const clock = windowClock();

  beforeAll(async () => {
    const { database, url } = await freshDatabase();
    store = database;
    if (url === undefined) throw new Error('PostgreSQL gives a database url');
    for (let i = 0; i < 2; i++) servers.push(await createServer(rateConfig(), { database: openPostgres(url, 5), clock }));
    admin = servers[0]?.bootstrapToken ?? '';
    expect(servers[1]?.bootstrapToken, 'only the first start bootstraps').toBeUndefined();
    await unlimitAdmin(app(0), admin);
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
    await store.close();
  });

  const app = (i: number): FastifyInstance => {
    const server = servers[i % 2];
    if (!server) throw new Error(`no instance ${i % 2}`);
    return server.app;
  };

  it('shares one budget: r falls by exactly one per request on either instance, and the 21st is 429 on both', async () => {
    const token = (await agentWithTokens(app(0), admin, 1)).tokens[0] ?? '';
    for (let i = 0; i < LIMIT; i++) {
      const res = await call(app(i), token, i % 3 === 0 ? 'POST' : 'GET', i % 3 === 0 ? '/api/v1/tasks' : '/api/v1/tasks?limit=1', i % 3 === 0 ? { title: `via ${i % 2}` } : undefined);
      expect(res.status, res.body).toBeLessThan(300);
      expect(res.headers['ratelimit-policy']).toBe(POLICY);
      expect(budget(res), `request ${i + 1} via instance ${i % 2}`).toEqual({ r: LIMIT - 1 - i, t: RESET_S });
    }
    expectRateLimited(await call(app(LIMIT), token, 'GET', '/api/v1/tasks'), LIMIT);
    expectRateLimited(await call(app(LIMIT + 1), token, 'GET', '/api/v1/tasks'), LIMIT);
  });

  it('counts concurrent requests on both instances, none refused below the limit, as spec/api.md promises', async () => {
    const token = (await agentWithTokens(app(0), admin, 1)).tokens[0] ?? '';
    const replies = await Promise.all(Array.from({ length: LIMIT + 4 }, (_, i) => call(app(i), token, 'GET', '/api/v1/whoami')));
    const admitted = replies.filter((r) => r.status === 200);
    expect(admitted.length).toBeGreaterThanOrEqual(LIMIT);
    expect(admitted.length + replies.filter((r) => r.status === 429).length).toBe(LIMIT + 4);
    // Racing requests may read the same sum, so `r` may read high, never below what is left.
    for (const reply of admitted) expect(budget(reply).r).toBeGreaterThanOrEqual(0);
    expectRateLimited(await call(app(0), token, 'GET', '/api/v1/whoami'), LIMIT);
  });

  it('counts a burst of 32 concurrent requests of one token every one, overshooting by at most the requests in flight', async () => {
    const token = (await agentWithTokens(app(0), admin, 1)).tokens[0] ?? '';
    const burst = 32;
    const replies = await Promise.all(Array.from({ length: burst }, (_, i) => call(app(i), token, 'GET', '/api/v1/whoami')));
    const admitted = replies.filter((r) => r.status === 200).length;
    expect(admitted).toBeGreaterThanOrEqual(LIMIT);
    expect(admitted).toBeLessThanOrEqual(LIMIT + burst - 1);
    for (const reply of replies.filter((r) => r.status === 429)) expectRateLimited(reply, LIMIT);
    // Every request of the burst was counted once: the next one, on either instance, is refused.
    expectRateLimited(await call(app(0), token, 'GET', '/api/v1/whoami'), LIMIT);
    expectRateLimited(await call(app(1), token, 'GET', '/api/v1/whoami'), LIMIT);
  });

  it('honours a revocation made on one instance at once on the other', async () => {
    const agent = await agentWithTokens(app(0), admin, 1);
    const token = agent.tokens[0] ?? '';
    const me = await call(app(1), token, 'GET', '/api/v1/whoami');
    expect(me.status).toBe(200);
    const revoke = await call(app(0), admin, 'DELETE', `/api/v1/tokens/${me.json<{ token: { id: string } }>().token.id}`);
    expect(revoke.status, revoke.body).toBe(200);
    const after = await call(app(1), token, 'GET', '/api/v1/whoami');
    expect(after.status).toBe(401);
    expect(after.json()).toMatchObject({ code: 'invalid_token' });
  });
});
