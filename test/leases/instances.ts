import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { expect } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import { SCOPES, type PrincipalKind, type Scope } from '../../src/domain/scopes.ts';
import { createIds } from '../../src/ids.ts';
import { createServer, type Server } from '../../src/server.ts';
import { insertAgent } from '../../src/store/agents.ts';
import { type Database, openPostgres } from '../../src/store/database.ts';
import { insertToken } from '../../src/store/tokens.ts';
import { generateToken, hashToken, tokenPrefix } from '../../src/tokens.ts';
import { engine, freshDatabase, type Principal, type RequestOptions, type Response, testConfig } from '../harness.ts';
import type { TaskBody } from '../rest/fixtures.ts';

/** Instances sharing one database: two on PostgreSQL; one on PGlite, which is single-process. */
export const INSTANCES = engine === 'pglite' ? 1 : 2;

/** The scopes an agent needs to claim and work on tasks. */
export const WORKER_SCOPES: readonly Scope[] = ['tasks:claim', 'tasks:read', 'tasks:write'];

/** Anything that sends an API request the way the harness does (TestServer, Cluster, a spawned server). */
export interface Requester {
  request(method: string, url: string, options?: RequestOptions): Promise<Response>;
}

export interface Instance {
  readonly server: Server;
  readonly baseUrl: string;
}

export interface Cluster extends Requester {
  readonly instances: readonly Instance[];
  /** For assertions straight on the store: its own pool on PostgreSQL, the shared PGlite otherwise. */
  readonly database: Database;
  readonly adminToken: string;
  /** Sends over real HTTP to instance `via` (default 0); writes get a fresh Idempotency-Key. */
  request(method: string, url: string, options?: RequestOptions & { via?: number }): Promise<Response>;
  /** Adds a principal straight into the store (there is no agent-management route yet) and returns its token. */
  addPrincipal(options?: { kind?: PrincipalKind; scopes?: readonly Scope[] }): Promise<Principal>;
  close(): Promise<void>;
}

/**
 * Starts `count` Baton instances on ONE fresh database, each with its own pool and sweeper,
 * listening on 127.0.0.1 port 0. PGlite lives in one process, so it allows one instance.
 */
export async function startInstances(count: number, overrides: Partial<Config> = {}, clock?: Clock): Promise<Cluster> {
  if (engine === 'pglite' && count !== 1) throw new Error('PGlite is single-process: start one instance');
  const { database, url } = await freshDatabase();
  const instances: Instance[] = [];
  let adminToken: string | undefined;
  try {
    for (let i = 0; i < count; i++) {
      const own = url === undefined ? database : openPostgres(url, 10);
      const server = await createServer(testConfig(overrides), { database: own, ...(clock ? { clock } : {}) });
      adminToken ??= server.bootstrapToken;
      const baseUrl = await server.app.listen({ port: 0, host: '127.0.0.1' });
      instances.push({ server, baseUrl });
    }
  } catch (error) {
    await Promise.allSettled(instances.map((instance) => instance.server.close()));
    if (url !== undefined || instances.length === 0) await database.close();
    throw error;
  }
  if (!adminToken) throw new Error('a fresh database should bootstrap an admin');
  const admin = adminToken;
  const ids = createIds();
  return {
    instances,
    database,
    adminToken: admin,
    request(method, path, options = {}) {
      const instance = instances[options.via ?? 0];
      if (!instance) throw new Error(`no instance ${options.via}`);
      return send(instance.baseUrl, admin, method, path, options);
    },
    async addPrincipal(options = {}) {
      const token = generateToken();
      const id = ids.make('agt');
      const scopes = [...(options.scopes ?? SCOPES)];
      const by = { created_at: new Date(), created_by_id: 'system', created_by_kind: 'system' };
      await database.db.transaction().execute(async (tx) => {
        await insertAgent(tx, { id, name: `test-${id.slice(-6)}`, kind: options.kind ?? 'agent', scopes, tool_allowlist: null, ...by });
        await insertToken(tx, { id: ids.make('tok'), agent_id: id, machine: 'test-machine', token_hash: hashToken(token), token_prefix: tokenPrefix(token), scopes, expires_at: null, ...by });
      });
      return { id, token };
    },
    async close() {
      await Promise.all(instances.map((instance) => instance.server.close()));
      // On PGlite the one instance owned (and closed) the shared database.
      if (url !== undefined) await database.close();
    },
  };
}

/** One request over real HTTP, shaped like the harness's `inject` response. */
export async function send(baseUrl: string, defaultToken: string, method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { ...options.headers };
  const token = options.token === undefined ? defaultToken : options.token;
  if (token !== null) headers.authorization = `Bearer ${token}`;
  if (method !== 'GET' && method !== 'HEAD' && options.key !== null) headers['idempotency-key'] = options.key ?? randomUUID();
  if (options.ifMatch !== undefined) headers['if-match'] = options.ifMatch;
  const payload = options.body !== undefined ? JSON.stringify(options.body) : options.payload;
  if (payload !== undefined) headers['content-type'] ??= 'application/json';
  const res = await fetch(`${baseUrl}${path}`, { method, headers, signal: AbortSignal.timeout(60_000), ...(payload !== undefined ? { body: payload } : {}) });
  const body = await res.text();
  return { status: res.status, headers: Object.fromEntries(res.headers), body, json: <T>() => JSON.parse(body) as T };
}

export interface LeaseBody {
  id: string;
  task_id: string;
  holder: { id: string; kind: string };
  epoch: number;
  state: 'active' | 'released' | 'expired' | 'ended';
  ttl_s: number;
  expires_at: string;
  ended_at: string | null;
}

export interface Claim {
  task: TaskBody & { lease: { id: string; holder: { id: string; kind: string }; epoch: number; expires_at: string } | null };
  lease: LeaseBody;
}

export interface EventBody {
  id: string;
  type: string;
  subject: string;
  actor: { id: string; kind: string };
  data: Record<string, unknown>;
}

/** `count` fresh tasks under a label of their own (`label` and a serial number), claimed at once by `token`'s caller. */
export async function claimBatch(cluster: Requester, token: string, count: number, label: string): Promise<Claim[]> {
  const own = `${label}-${claimedBatches++}`;
  for (let i = 0; i < count; i++) await createTask(cluster, { labels: [own] });
  const res = await cluster.request('POST', '/api/v1/tasks/claim', { token, body: { labels: [own], limit: count } });
  expect(res.status, res.body).toBe(200);
  const { claims } = res.json<{ claims: Claim[] }>();
  expect(claims).toHaveLength(count);
  return claims;
}
let claimedBatches = 0;

export async function createTask(r: Requester, body: Record<string, unknown> = {}): Promise<TaskBody> {
  const res = await r.request('POST', '/api/v1/tasks', { body: { title: 'a task', ...body } });
  expect(res.status, res.body).toBe(201);
  return res.json<TaskBody>();
}

/** Claims one task by id as `token`; expects 200. */
export async function claimTask(r: Requester, id: string, token: string, body: Record<string, unknown> = {}): Promise<Claim> {
  const res = await r.request('POST', `/api/v1/tasks/${id}/claim`, { token, body });
  expect(res.status, res.body).toBe(200);
  return res.json<Claim>();
}

export async function getTask(r: Requester, id: string, token?: string): Promise<Claim['task']> {
  const res = await r.request('GET', `/api/v1/tasks/${id}`, token === undefined ? {} : { token });
  expect(res.status, res.body).toBe(200);
  return res.json<Claim['task']>();
}

/**
 * Waits until cursors can pass every committed event (`baton_events_held_back 0` on /metrics). On
 * a shared PostgreSQL another test's open transaction holds the newest events back from cursors
 * for a while (delays, never drops them: src/store/events.ts), so a test that counts events reads
 * them once they have settled.
 */
export async function eventsSettled(r: Requester): Promise<void> {
  const heldBack = async () => /^baton_events_held_back (\d+)$/m.exec((await r.request('GET', '/metrics')).body)?.[1];
  // Up to a minute: the longest a stalled session may stay idle in a transaction (BATON_DB_IDLE_IN_TRANSACTION_TIMEOUT_MS).
  const deadline = Date.now() + 60_000;
  while ((await heldBack()) !== '0') {
    if (Date.now() > deadline) throw new Error(`events still held back after 60 s; the oldest transactions on the server:\n${await oldestTransactions()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Who holds cursors back: the sessions with a transaction id, oldest first (PostgreSQL; for a failure message). */
async function oldestTransactions(): Promise<string> {
  const url = process.env.BATON_TEST_DATABASE_URL;
  if (!url) return '(PGlite: none)';
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<Record<string, unknown>>(
      `SELECT datname, pid, backend_type, state, now() - xact_start AS age, left(query, 200) AS query FROM pg_stat_activity WHERE backend_xid IS NOT NULL ORDER BY xact_start LIMIT 5`,
    );
    return rows.map((row) => JSON.stringify(row)).join('\n') || '(none now)';
  } finally {
    await client.end();
  }
}

/** Every item of a paged list, following `next_cursor` with limit=100 (bounded, so a cursor bug cannot loop forever); event lists once settled. */
export async function pages<T>(r: Requester, path: string, token?: string): Promise<T[]> {
  if (/\/events(\?|$)/.test(path)) await eventsSettled(r);
  const items: T[] = [];
  let cursor: string | null = null;
  for (let page = 0; page < 1000; page++) {
    const separator = path.includes('?') ? '&' : '?';
    const res = await r.request('GET', `${path}${separator}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`, token === undefined ? {} : { token });
    expect(res.status, res.body).toBe(200);
    const body = res.json<{ data: T[]; next_cursor: string | null }>();
    items.push(...body.data);
    cursor = body.next_cursor;
    if (cursor === null) return items;
  }
  throw new Error(`GET ${path} did not end within 1000 pages`);
}

/** A task's whole timeline over HTTP, in commit order (as the admin). */
export function taskEvents(r: Requester, id: string): Promise<EventBody[]> {
  return pages<EventBody>(r, `/api/v1/tasks/${id}/events`);
}

/** The events of `type` about one lease. */
export function leaseEvents(events: readonly EventBody[], type: string, leaseId: string): EventBody[] {
  return events.filter((event) => event.type === type && event.data.lease_id === leaseId);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/** The server's clock, moved by the test: lease time passes only when the test says so, however slow the machine. */
export interface TestClock extends Clock {
  advance(ms: number): void;
  /** Sets the time to `ms` after an ISO instant (before it, for a negative `ms`). */
  setPast(iso: string, ms?: number): void;
}

export function testClock(): TestClock {
  let time = Date.now();
  return {
    now: () => new Date(time),
    advance(ms) {
      time += ms;
    },
    setPast(iso, ms = 1) {
      time = Date.parse(iso) + ms;
    },
  };
}

/** The cron secret the lease tests configure, to run one sweep on demand through `/cron/keepalive`. */
export const CRON_SECRET = 'lease-tests-cron-secret-0123456789';

/** One pass of every maintenance loop (the lease sweeper among them) on instance `via`, through `POST /cron/keepalive`. */
export async function sweep(c: Cluster, via = 0): Promise<void> {
  await keepalive(c, via);
}

/** `POST /cron/keepalive` on instance `via`: what each maintenance pass reported. */
export async function keepalive(c: Cluster, via = 0): Promise<Record<string, { ok: boolean } & Record<string, unknown>>> {
  const res = await c.request('POST', '/cron/keepalive', { token: null, headers: { authorization: `Bearer ${CRON_SECRET}` }, key: null, via });
  expect(res.status, res.body).toBe(200);
  return res.json<{ passes: Record<string, { ok: boolean } & Record<string, unknown>> }>().passes;
}

/** One maintenance pass on every instance at once: the sum over them of the count `field` of pass `pass` (each must succeed). */
export async function keepaliveEverywhere(c: Cluster, pass: string, field: string): Promise<number> {
  const counts = await Promise.all(
    c.instances.map(async (_, via) => {
      const report = (await keepalive(c, via))[pass];
      expect(report?.ok, pass).toBe(true);
      return Number(report?.[field]);
    }),
  );
  return counts.reduce((sum, n) => sum + n, 0);
}

/** Polls `probe` every ~100 ms until it returns a value, for at most `boundMs`; the bound is the only timing claim. */
export async function pollUntil<T>(probe: () => Promise<T | undefined>, boundMs: number, what: string): Promise<T> {
  const deadline = Date.now() + boundMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${boundMs} ms`);
    await sleep(100);
  }
}

/** Waits until some session of `raw`'s database waits on a lock (a request queued behind a lock `raw` holds). */
export async function untilWaitingOnLock(raw: pg.Client, what: string): Promise<void> {
  await pollUntil(
    async () => {
      const { rows } = await raw.query<{ waiting: number }>(
        "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
      );
      return (rows[0]?.waiting ?? 0) > 0 ? true : undefined;
    },
    10_000,
    what,
  );
}
