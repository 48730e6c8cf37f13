/**
 * What a running instance does when PostgreSQL misbehaves under it: a migration run by someone
 * else, a terminated backend, a network reset, a stall, and callers who vary every value they can.
 * PostgreSQL only: PGlite runs in this process, with no connection to lose and no other session to
 * migrate it.
 */
import net from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { sql } from 'kysely';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { type Database, openPostgres } from '../../src/store/database.ts';
import { DEFAULT_TIMEOUTS } from '../../src/store/postgres-pool.ts';
import { engine, freshDatabase, type Response, startTestServer, type TestServer } from '../harness.ts';
import { testClock } from '../leases/instances.ts';

/** Background loops run every 50 ms of real time here; waited for, bounded generously. */
const WAIT = { timeout: 30_000, interval: 50 };

const onPostgres = describe.skipIf(engine !== 'postgres');

/**
 * A TCP proxy in front of PostgreSQL that can reset every open connection, stop passing bytes, or
 * refuse every connection from then on (as a database that went down), counting those it refused.
 */
async function startProxy(target: URL): Promise<{ url: (databaseUrl: string) => string; reset(): void; stall(): void; resume(): void; refuse(): void; refused(): number; close(): Promise<void> }> {
  const open = new Set<net.Socket>();
  let stalled = false;
  let refusing = false;
  let refused = 0;
  const paused: net.Socket[] = [];
  const server = net.createServer((client) => {
    if (refusing) {
      refused++;
      client.resetAndDestroy();
      return;
    }
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    if (stalled) paused.push(client.pause(), upstream.pause());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url(databaseUrl) {
      const url = new URL(databaseUrl);
      url.hostname = '127.0.0.1';
      url.port = String(port);
      return url.toString();
    },
    reset() {
      for (const socket of open) socket.resetAndDestroy();
    },
    stall() {
      stalled = true;
      for (const socket of open) paused.push(socket.pause());
    },
    resume() {
      stalled = false;
      for (const socket of paused.splice(0)) socket.resume();
    },
    refuse() {
      refusing = true;
      for (const socket of open) socket.resetAndDestroy();
    },
    refused: () => refused,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const problemOf = (response: Response) => response.json<{ code: string; retryable: boolean; detail: string; hint: string }>();

onPostgres('a running instance under database failures (PostgreSQL)', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** A server on a fresh database; `through` opens its pool differently (a proxy, one connection, short timeouts). */
  async function serve(through?: (url: string) => Database): Promise<{ baton: TestServer; url: string }> {
    const fresh = await freshDatabase();
    const url = fresh.url ?? '';
    let database = fresh.database;
    if (through) {
      await fresh.database.close();
      database = through(url);
    }
    const baton = await startTestServer({}, { database });
    cleanups.push(() => baton.close());
    return { baton, url };
  }

  /** A session of our own on the database at `url`, for DDL and locks. */
  async function session(url: string): Promise<pg.Client> {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    cleanups.push(() => client.end());
    return client;
  }

  it('recovers by itself after another session adds a column and changes a column type: no call fails more than once', async () => {
    const { baton, url } = await serve();
    const agent = (await baton.request('POST', '/api/v1/agents', { body: { name: 'migrated-agent', scopes: ['tasks:read'] } })).json<{ id: string }>();
    const task = (await baton.request('POST', '/api/v1/tasks', { body: { title: 'Before the migration' } })).json<{ id: string }>();
    /** Every kind of call, each run once before the migration so its statements are prepared on the pool's connections. */
    const calls: [string, () => Promise<Response>][] = [
      ['agents_update', () => baton.request('PATCH', `/api/v1/agents/${agent.id}`, { body: { name: `renamed-${Math.random().toString(36).slice(2, 8)}` } })],
      ['agents_get', () => baton.request('GET', `/api/v1/agents/${agent.id}`)],
      ['agents_list', () => baton.request('GET', '/api/v1/agents')],
      ['tasks_create', () => baton.request('POST', '/api/v1/tasks', { body: { title: 'During the migration' } })],
      ['tasks_get', () => baton.request('GET', `/api/v1/tasks/${task.id}`)],
      ['tasks_list', () => baton.request('GET', '/api/v1/tasks')],
      ['tasks_update', () => baton.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { priority: 'high' } })],
      ['tasks_claim_next', () => baton.request('POST', '/api/v1/tasks/claim', { body: {} })],
      ['events_list', () => baton.request('GET', '/api/v1/events')],
      ['whoami', () => baton.request('GET', '/api/v1/whoami')],
    ];
    for (const [name, call] of calls) expect((await call()).status, name).toBeLessThan(300);

    const operator = await session(url);
    await operator.query('ALTER TABLE agents ADD COLUMN nickname text');
    // Not title or description: the search document (migration 0050) is generated from them.
    await operator.query('ALTER TABLE tasks ALTER COLUMN lease_holder_kind TYPE varchar(16)');

    const failures: string[] = [];
    for (let round = 0; round < 3; round++) {
      for (const [name, call] of calls) {
        let response = await call();
        if (response.status >= 500) {
          expect(response.status, name).toBe(503);
          expect(problemOf(response)).toMatchObject({ code: 'unavailable', retryable: true });
          failures.push(name);
          response = await call();
        }
        expect(response.status, `${name} retried: ${response.body}`).toBeLessThan(300);
      }
    }
    // One generation of stale statements, noticed once: at most the first call after the DDL fails.
    expect(failures.length).toBeLessThanOrEqual(1);
  });

  it('survives pg_terminate_backend of a request waiting on a row lock: that request gets a 503, the next ones succeed', async () => {
    const { baton, url } = await serve();
    const task = (await baton.request('POST', '/api/v1/tasks', { body: { title: 'Locked' } })).json<{ id: string }>();
    const holder = await session(url);
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [task.id]);

    const waiting = baton.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Waited' } });
    let pid: number | undefined;
    while (pid === undefined) {
      const { rows } = await holder.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      pid = rows[0]?.pid;
    }
    await holder.query('SELECT pg_terminate_backend($1)', [pid]);
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(problemOf(answer)).toMatchObject({ code: 'unavailable', retryable: true });
    expect(problemOf(answer).detail).toMatch(/may or may not have been applied/);
    await holder.query('ROLLBACK');

    // Every other session of the database goes too, the LISTEN connection among them.
    await holder.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    for (let i = 0; i < 12; i++) {
      const read = await baton.request('GET', `/api/v1/tasks/${task.id}`);
      // A pooled connection the server killed while idle may fail one call before the pool drops it.
      if (read.status === 503) continue;
      expect(read.status).toBe(200);
    }
    const renamed = await baton.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'After the storm' } });
    expect(renamed.status).toBe(200);
    expect((await baton.request('GET', '/readyz')).status).toBe(200);
  });

  it('survives a network reset mid-request through a TCP proxy: a 503 for the request in flight, success after', async () => {
    const proxy = await startProxy(new URL(process.env.BATON_TEST_DATABASE_URL ?? ''));
    cleanups.push(() => proxy.close());
    const { baton, url } = await serve((direct) => openPostgres(proxy.url(direct), 4));
    const task = (await baton.request('POST', '/api/v1/tasks', { body: { title: 'Behind a proxy' } })).json<{ id: string }>();
    const holder = await session(url);
    await holder.query('BEGIN');
    await holder.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [task.id]);

    const waiting = baton.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Reset' } });
    while ((await holder.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`)).rowCount === 0);
    proxy.reset();
    const answer = await waiting;
    expect(answer.status).toBe(503);
    expect(problemOf(answer)).toMatchObject({ code: 'unavailable', retryable: true });
    await holder.query('ROLLBACK');

    let ok = 0;
    for (let i = 0; i < 8; i++) if ((await baton.request('GET', `/api/v1/tasks/${task.id}`)).status === 200) ok++;
    expect(ok).toBeGreaterThanOrEqual(4);
    expect((await baton.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Reconnected' } })).status).toBe(200);
  });

  it('answers 503 from /readyz and for a write while the database stalls; the write, retried with its key once it answers, succeeds', async () => {
    const proxy = await startProxy(new URL(process.env.BATON_TEST_DATABASE_URL ?? ''));
    cleanups.push(() => proxy.close());
    const timeouts = { ...DEFAULT_TIMEOUTS, connectMs: 500, statementMs: 300 };
    const { baton } = await serve((direct) => openPostgres(proxy.url(direct), 4, { timeouts }));
    expect((await baton.request('GET', '/readyz')).status).toBe(200);

    proxy.stall();
    const ready = await baton.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(problemOf(ready)).toMatchObject({ code: 'unavailable', retryable: true });
    const write = await baton.request('POST', '/api/v1/tasks', { body: { title: 'Into the stall' }, key: 'stalled-write' });
    expect(write.status).toBe(503);
    expect(problemOf(write)).toMatchObject({ code: 'unavailable', retryable: true });

    proxy.resume();
    let retried: Response | undefined;
    for (let i = 0; i < 10 && (retried === undefined || retried.status === 503); i++) {
      retried = await baton.request('POST', '/api/v1/tasks', { body: { title: 'Into the stall' }, key: 'stalled-write' });
    }
    expect(retried?.status).toBe(201);
  });

  it('logs an outage of the database once, not every failing pass: one warning, again a minute later on its clock with how many failures it stood for, and no error with a stack', async () => {
    const proxy = await startProxy(new URL(process.env.BATON_TEST_DATABASE_URL ?? ''));
    cleanups.push(() => proxy.close());
    const fresh = await freshDatabase();
    await fresh.database.close();
    const lines: { level: number; msg: string; pass?: string; code?: string; failures_since_last?: number }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as (typeof lines)[number]);
        done();
      },
    });
    const clock = testClock();
    const database = openPostgres(proxy.url(fresh.url ?? ''), 4, { timeouts: { ...DEFAULT_TIMEOUTS, connectMs: 500, statementMs: 300 } });
    const baton = await startTestServer({ sweepIntervalMs: 50 }, { database, clock, logger: pino({ level: 'warn' }, sink) });
    cleanups.push(() => baton.close());
    const warnings = () => lines.filter((line) => line.level === 40 && line.msg.includes('the database is unavailable'));
    const errors = () => lines.filter((line) => line.level >= 50);

    proxy.refuse();
    // The six sweep passes fail every 50 ms, each after one refused connection: wait for 40 of them.
    await expect.poll(() => warnings().length, WAIT).toBe(1);
    await expect.poll(() => proxy.refused(), WAIT).toBeGreaterThanOrEqual(40);
    const [first] = warnings();
    // Whichever loop met it first: a maintenance pass (named) or the webhook worker.
    expect(first?.msg).toMatch(/^(maintenance pass|webhook delivery) failed: the database is unavailable; .* at most once a minute/);
    expect(first).toMatchObject({ failures_since_last: 0, code: 'ECONNRESET' });
    expect(errors()).toEqual([]);

    clock.advance(61_000);
    await expect.poll(() => warnings().length, WAIT).toBe(2);
    expect(warnings()[1]?.failures_since_last).toBeGreaterThanOrEqual(30);
    expect(errors()).toEqual([]);
  });

  it('keeps the prepared statements of one connection flat under 600 claims with varied limits, floors and labels', async () => {
    const { baton } = await serve((direct) => openPostgres(direct, 1));
    const prepared = async () =>
      (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(baton.database.db)).rows.map((r) => r.statement);
    const priorities = ['low', 'normal', 'high', 'urgent'];
    const claim = (i: number) =>
      baton.request('POST', '/api/v1/tasks/claim', {
        body: { limit: (i % 100) + 1, min_priority: priorities[i % 4], ...(i % 3 === 0 ? { labels: [`label-${i % 50}`] } : {}) },
      });
    // The values repeat every 300 claims (limits every 100, floors every 4, labels every 3 and 50):
    // two full turns send every combination twice, as 5,000 did, in an eighth of the time.
    for (let i = 0; i < 600; i++) {
      const answer = await claim(i);
      if (answer.status !== 200) throw new Error(`claim ${i} answered ${answer.status}: ${answer.body}`);
    }
    const statements = await prepared();
    // The pick's four texts (with or without a label filter, one task or several), whatever the values; and a small, fixed set in all.
    expect(statements.filter((text) => text.includes('claim_priority'))).toHaveLength(4);
    expect(statements.length).toBeLessThan(50);
  }, 300_000);
});
