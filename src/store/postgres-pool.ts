import type { PostgresPool, PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { isDatabaseUnavailable } from '../errors.ts';
import type { HostRotation } from '../postgres-hosts.ts';
import type { PreparedStatements } from './prepared-statements.ts';

/** Limits on how long one PostgreSQL call may take; each is a row of the README's configuration table. */
export interface PostgresTimeouts {
  /** Opening a connection, or waiting for a free one in the pool. */
  readonly connectMs: number;
  /** One statement on the server (`statement_timeout`); the client gives up a little after it, for a server that stopped answering. */
  readonly statementMs: number;
  /** Waiting for a row or table lock (`lock_timeout`). */
  readonly lockMs: number;
  /** A transaction left idle, e.g. by a stalled process (`idle_in_transaction_session_timeout`). */
  readonly idleInTransactionMs: number;
}

export const DEFAULT_TIMEOUTS: PostgresTimeouts = { connectMs: 5_000, statementMs: 15_000, lockMs: 5_000, idleInTransactionMs: 60_000 };

/** What a pool's connections are opened with. */
export interface PoolOptions {
  readonly timeouts?: PostgresTimeouts | undefined;
  /** Told when a pooled connection fails (terminated backend, reset network); the pool replaces it. */
  readonly onConnectionError?: ((error: Error) => void) | undefined;
  /** libpq `options` for every session (`-c name=value`). */
  readonly sessionOptions?: string;
}

/**
 * Baton's PostgreSQL pool, as pg makes it, with the timeouts set on every connection. A
 * connection that fails, idle or in use, must not crash the process: pg emits `error` on the
 * client, which is heard here; the request using it gets the error, and the pool drops it. With
 * several hosts, each new connection opens on the rotation's current host (pg-pool's `Client`
 * option); `connectWritable` moves the rotation on.
 */
export function openPool(rotation: HostRotation, poolSize: number, options: PoolOptions = {}): pg.Pool {
  const t = options.timeouts ?? DEFAULT_TIMEOUTS;
  const pool = new pg.Pool({
    connectionString: rotation.hosts.urls[0],
    ...(rotation.hosts.urls.length > 1 ? { Client: rotatingClient(rotation) } : {}),
    max: poolSize,
    connectionTimeoutMillis: t.connectMs,
    statement_timeout: t.statementMs,
    lock_timeout: t.lockMs,
    idle_in_transaction_session_timeout: t.idleInTransactionMs,
    query_timeout: t.statementMs + 2_000,
    ...(options.sessionOptions ? { options: options.sessionOptions } : {}),
  });
  const heard = (error: Error) => options.onConnectionError?.(error);
  pool.on('error', heard);
  pool.on('connect', (client) => client.on('error', heard));
  return pool;
}

/** The host index each rotating client opened on. */
const HOST = Symbol('baton.host');

type HostClient = pg.ClientBase & { [HOST]?: number };

/** pg's client, opened on the host `rotation` names at the moment it is made. */
function rotatingClient(rotation: HostRotation): typeof pg.Client {
  return class extends pg.Client {
    [HOST]: number;
    constructor(config?: pg.ClientConfig) {
      const index = rotation.current();
      super({ ...config, connectionString: rotation.hosts.urls[index] });
      this[HOST] = index;
    }
  };
}

/**
 * A connection from `pool` on a host that takes writes. Each host is tried at most once per call:
 * one that refuses the connection, or (with `target_session_attrs=read-write`) answers that its
 * sessions are read-only, is passed over. When none will do, the last failure is thrown; it is
 * one `isDatabaseUnavailable` knows (a 503 with Retry-After). A connection is checked once, when
 * first handed out; one that later finds its host read-only fails its statement (25006) and moves
 * the rotation on in `kyselyPool`.
 */
export async function connectWritable(pool: pg.Pool, rotation: HostRotation, checked: WeakSet<pg.PoolClient>): Promise<pg.PoolClient> {
  const { urls, readWrite } = rotation.hosts;
  if (urls.length === 1 && !readWrite) return pool.connect();
  let failure: unknown;
  for (let tried = 0; tried < urls.length; tried++) {
    const index = rotation.current();
    let client: pg.PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      rotation.passOver(index);
      failure = error;
      continue;
    }
    if (!readWrite || checked.has(client)) return client;
    try {
      if (await takesWrites(client)) {
        checked.add(client);
        return client;
      }
      failure = readOnlyHost();
    } catch (error) {
      failure = error;
    }
    client.release(true);
    rotation.passOver((client as HostClient)[HOST] ?? index);
  }
  throw failure;
}

export async function takesWrites(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  return rows[0]?.transaction_read_only === 'off';
}

/** What a standby answers a write with (SQLSTATE 25006, read_only_sql_transaction). */
export function readOnlyHost(): Error {
  return Object.assign(new Error('No host in DATABASE_URL takes writes now (target_session_attrs=read-write): the primary is down or a standby is being promoted.'), { code: '25006' });
}

/**
 * The pool behind `Database.counters`: a write that only counts (the rate window) is committed
 * without waiting for its WAL flush, which every request, reads included, used to wait for.
 */
export function openCounterPool(rotation: HostRotation, poolSize: number, options: PoolOptions = {}): pg.Pool {
  return openPool(rotation, Math.max(2, Math.ceil(poolSize / 2)), { ...options, sessionOptions: '-c synchronous_commit=off' });
}

/**
 * `pool` as Kysely's PostgreSQL dialect asks for one (its public `PostgresPool` interface): each
 * statement goes out named or not as `statements` says, and a connection on which a statement
 * failed for the connection's sake (lost, timed out, holding a stale plan), or that is full of
 * prepared statements, is closed on release rather than reused.
 */
export function kyselyPool(pool: pg.Pool, statements: PreparedStatements, rotation: HostRotation, checked: WeakSet<pg.PoolClient>): PostgresPool {
  return {
    options: pool.options,
    async connect(): Promise<PostgresPoolClient> {
      const client = await connectWritable(pool, rotation, checked);
      let broken = false;
      const query = async (text: string, parameters: readonly unknown[]) => {
        try {
          return await client.query(statements.statement(client, text, [...parameters]));
        } catch (error) {
          statements.failed(error);
          if (isDatabaseUnavailable(error)) broken = true;
          // The host was demoted under an open connection: new ones go to the next host.
          if ((error as { code?: unknown }).code === '25006') rotation.passOver((client as HostClient)[HOST] ?? rotation.current());
          throw error;
        }
      };
      return {
        // Kysely's other overload, a cursor, serves only streamed queries, which Baton does not make.
        query: query as unknown as PostgresPoolClient['query'],
        release: (destroy?: boolean) => client.release(destroy === true || broken || statements.full(client)),
      };
    },
    end: () => pool.end(),
  };
}
