/**
 * The baseline Baton is measured against: one bare Fastify route per scenario that sends exactly
 * the SQL Baton sends for that request (bench/baseline-statements.ts, checked against Baton by
 * bench/sql-check.ts), with parameters, and answers with the row as JSON. No validation, no view shaping, no error
 * catalogue, no per-request token touch: whatever Baton spends beyond this is the stack's cost.
 * Like Baton, it answers 401 for an unknown token and 429 past the token's rate budget.
 *
 *   node bench/baseline-server.ts --pool-size=10 --rate-limit=600/60s (--database-url=postgres://… | --data-dir=/tmp/…)
 *
 * Prints `baseline listening at http://…` once ready. Exits on SIGTERM, SIGINT or when stdin
 * closes, so it cannot outlive the runner that spawned it.
 */
import { createHash } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import Fastify from 'fastify';
import { createIds } from '../src/ids.ts';
import { EVENTS_CHANNEL } from '../src/store/events.ts';
import { TENANT_ROLE } from '../src/store/workspace-scope.ts';
import { AUTHENTICATE, BIND_WORKSPACE, CLAIM_KEY, FIND_TASK, INSERT_TASK, LOCK_TASK, STORE_RESPONSE_WITH_EVENTS, UPDATE_TITLE } from './baseline-statements.ts';
import { prepared, stockPool } from './pg-pools.ts';
import { serveUntilStopped } from './processes.ts';

interface Query {
  query<R>(text: string, params: unknown[]): Promise<R[]>;
}

interface Store extends Query {
  /** Where the grant lookup and rate count go: Baton's `Database.counters`. */
  counters: Query;
  transaction<T>(run: (tx: Query) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** A pg pool used the way Kysely's PostgresDialect uses it: `begin`/`commit` on one checked-out client. */
function postgresStore(url: string, poolSize: number): Store {
  const pool = stockPool(url, poolSize);
  const counterPool = stockPool(url, Math.max(2, Math.ceil(poolSize / 2)), { synchronousCommitOff: true });
  return {
    query: async <R>(text: string, params: unknown[]) => (await pool.query(prepared(text, params))).rows as R[],
    counters: { query: async <R>(text: string, params: unknown[]) => (await counterPool.query(prepared(text, params))).rows as R[] },
    async transaction(run) {
      const client = await pool.connect();
      try {
        await client.query('begin');
        const result = await run({ query: async <R>(text: string, params: unknown[]) => (await client.query(prepared(text, params))).rows as R[] });
        await client.query('commit');
        return result;
      } catch (error) {
        await client.query('rollback').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    async close() {
      await Promise.all([pool.end(), counterPool.end()]);
    },
  };
}

/** PGlite in process, as Kysely's PGliteDialect uses it: `pglite.transaction` for writes. */
async function pgliteStore(dataDir: string): Promise<Store> {
  const db = await PGlite.create(dataDir);
  const query = async <R>(text: string, params: unknown[]) => (await db.query<R>(text, params)).rows;
  return {
    query,
    counters: { query },
    transaction: (run) => db.transaction((tx) => run({ query: async <R>(text: string, params: unknown[]) => (await tx.query<R>(text, params)).rows })),
    close: () => db.close(),
  };
}

/** Baton's default BATON_IDEMPOTENCY_TTL_S. */
const KEY_TTL_MS = 24 * 3600 * 1000;

/** A request budget per token and fixed window, as Baton's BATON_RATE_LIMIT (`<requests>/<seconds>s`). */
interface RateLimit {
  limit: number;
  windowS: number;
}

interface Principal {
  id: string;
  kind: string;
  tokenId: string;
  machine: string;
  workspaceId: string;
}

interface Grant {
  token_id: string;
  machine: string;
  agent_id: string;
  agent_kind: string;
  rate_limit: number | null;
  used: number | null;
  workspace_id: string;
  workspace_rate_limit: number | null;
  workspace_used: number | null;
}

interface Reply {
  status: number;
  body: string;
}

interface TaskRow {
  id: string;
  title: string;
}

interface WriteContext {
  principal: Principal;
  key: string;
  now: Date;
}

function createBaseline(store: Store, rate: RateLimit) {
  const ids = createIds();

  /** The grant lookup that also counts the request in its token's rate window; undefined means 401 or 429. */
  async function authenticate(authorization: string | undefined): Promise<Principal | undefined> {
    const hash = createHash('sha256').update(authorization?.slice('Bearer '.length) ?? '').digest();
    const now = new Date();
    const windowStart = Math.floor(now.getTime() / (rate.windowS * 1000)) * rate.windowS;
    const [grant] = await store.counters.query<Grant>(AUTHENTICATE, [hash, windowStart, now]);
    if (!grant || grant.used === null || grant.used > (grant.rate_limit ?? rate.limit)) return undefined;
    if (grant.workspace_rate_limit !== null && (grant.workspace_used ?? 0) > grant.workspace_rate_limit) return undefined;
    return { id: grant.agent_id, kind: grant.agent_kind, tokenId: grant.token_id, machine: grant.machine, workspaceId: grant.workspace_id };
  }

  /** Every operation's transaction starts bound to its caller's workspace (row-level security). */
  function bound<T>(principal: Principal, run: (tx: Query) => Promise<T>): Promise<T> {
    return store.transaction(async (tx) => {
      await tx.query(BIND_WORKSPACE, [TENANT_ROLE, principal.workspaceId, principal.id]);
      return run(tx);
    });
  }

  /** BEGIN; claim the key; the write; store the response and append the event; COMMIT. */
  async function write(ctx: WriteContext, operation: string, input: unknown, run: (tx: Query) => Promise<{ reply: Reply; event?: object }>): Promise<Reply> {
    const { principal, key, now } = ctx;
    return bound(principal, async (tx) => {
      const [claim] = await tx.query<{ locked: boolean; stored: { status_code: number; response_body: string } | null }>(CLAIM_KEY, [principal.id, key, principal.id, key, now]);
      if (claim?.stored) return { status: claim.stored.status_code, body: claim.stored.response_body };
      if (!claim?.locked) return { status: 409, body: '{}' };
      const { reply, event } = await run(tx);
      if (!event) return reply;
      const print = createHash('sha256').update(`${operation}\n${JSON.stringify(input)}`).digest();
      const provenance = { actor_id: principal.id, actor_kind: principal.kind, token_id: principal.tokenId, machine: principal.machine, idempotency_key: key, created_at: now.toISOString() };
      const events = JSON.stringify([{ id: ids.make('evt'), ...event, ...provenance, approval_id: null }]);
      const stored = await tx.query(STORE_RESPONSE_WITH_EVENTS, [EVENTS_CHANNEL, events, principal.id, key, print, operation, reply.status, reply.body, now, new Date(now.getTime() + KEY_TTL_MS), now]);
      if (stored.length === 0) throw new Error('lost the idempotency-key race');
      return reply;
    });
  }

  return {
    authenticate,
    read: async (principal: Principal, id: string): Promise<Reply> => {
      const [row] = await bound(principal, (tx) => tx.query<TaskRow>(FIND_TASK, [id]));
      return row ? { status: 200, body: JSON.stringify(row) } : { status: 404, body: '{}' };
    },
    create: (ctx: WriteContext, input: { title: string; labels?: string[] }): Promise<Reply> =>
      write(ctx, 'tasks_create', input, async (tx) => {
        const { principal, now } = ctx;
        const labels = input.labels ?? [];
        const row = [ids.make('tsk'), input.title, '', 'todo', 1, labels, [], now, principal.id, principal.kind, now, principal.id, principal.kind, null, null, null, null, null, null, null, null];
        const [task] = await tx.query<TaskRow>(INSERT_TASK, row);
        if (!task) throw new Error('insert returned no row');
        const data = { title: input.title, description: '', status: 'todo', priority: 'normal', labels, blocked_by: [] };
        return { reply: { status: 201, body: JSON.stringify(task) }, event: { type: 'task.created', subject: task.id, data } };
      }),
    update: (ctx: WriteContext, id: string, input: { title: string }): Promise<Reply> =>
      write(ctx, 'tasks_update', { ...input, id }, async (tx) => {
        const { principal, now } = ctx;
        const [before] = await tx.query<TaskRow>(LOCK_TASK, [id]);
        if (!before) return { reply: { status: 404, body: '{}' } };
        const [task] = await tx.query<TaskRow>(UPDATE_TITLE, [input.title, now, principal.id, principal.kind, id]);
        const data = { changes: { title: { from: before.title, to: input.title } } };
        return { reply: { status: 200, body: JSON.stringify(task) }, event: { type: 'task.updated', subject: id, data } };
      }),
  };
}

async function main(): Promise<void> {
  const options = { 'database-url': { type: 'string' }, 'data-dir': { type: 'string' }, 'pool-size': { type: 'string' }, 'rate-limit': { type: 'string' } } as const;
  const { values } = parseArgs({ options });
  const url = values['database-url'];
  const dataDir = values['data-dir'];
  const rate = /^(\d+)\/(\d+)s$/.exec(values['rate-limit'] ?? '');
  if (!url === !dataDir || !rate || !values['pool-size']) throw new Error('usage: --pool-size=10 --rate-limit=600/60s (--database-url=… | --data-dir=…)');
  const store = url ? postgresStore(url, Number(values['pool-size'])) : await pgliteStore(dataDir ?? '');
  const baseline = createBaseline(store, { limit: Number(rate[1]), windowS: Number(rate[2]) });
  const app = Fastify({ logger: false });

  const json = 'application/json; charset=utf-8';
  const context = async (headers: Record<string, string | string[] | undefined>): Promise<WriteContext | undefined> => {
    const principal = await baseline.authenticate(headers.authorization as string | undefined);
    const key = headers['idempotency-key'];
    return principal && typeof key === 'string' ? { principal, key, now: new Date() } : undefined;
  };
  app.post('/api/v1/tasks', async (request, reply) => {
    const ctx = await context(request.headers);
    if (!ctx) return reply.code(401).send();
    const result = await baseline.create(ctx, request.body as { title: string; labels?: string[] });
    return reply.code(result.status).type(json).send(result.body);
  });
  app.get<{ Params: { id: string } }>('/api/v1/tasks/:id', async (request, reply) => {
    const principal = await baseline.authenticate(request.headers.authorization);
    if (!principal) return reply.code(401).send();
    const result = await baseline.read(principal, request.params.id);
    return reply.code(result.status).type(json).send(result.body);
  });
  app.patch<{ Params: { id: string } }>('/api/v1/tasks/:id', async (request, reply) => {
    const ctx = await context(request.headers);
    if (!ctx) return reply.code(401).send();
    const result = await baseline.update(ctx, request.params.id, request.body as { title: string });
    return reply.code(result.status).type(json).send(result.body);
  });
  app.get('/readyz', async () => {
    await store.query('SELECT 1', []);
    return { status: 'ready' };
  });

  await serveUntilStopped(app, 'baseline', () => store.close());
}

if (import.meta.main) await main();
