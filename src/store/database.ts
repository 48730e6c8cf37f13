import { chmod, mkdir, stat } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type LogEvent, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { QueryListener } from './connection.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { hostRotation, parsePostgresHosts } from '../postgres-hosts.ts';
import { connectWritable, DEFAULT_TIMEOUTS, kyselyPool, openCounterPool, openPool, type PostgresTimeouts } from './postgres-pool.ts';
import { type PreparedStatements, preparedStatements } from './prepared-statements.ts';
import { postgresNotifications } from './postgres-listen.ts';
import type { QueryTracer } from '../tracing.ts';
import type { DB } from './schema.ts';

export type { QueryListener } from './connection.ts';

export type Engine = 'pglite' | 'postgres';

/** An open database: the query builder plus what migrations and health checks need. */
export interface Database {
  readonly db: Kysely<DB>;
  /**
   * For statements whose commit need not wait for the disk: the per-request rate count and token
   * touch. On PostgreSQL a second, smaller pool whose sessions run `synchronous_commit = off` (a
   * crash of the database may forget the last fraction of a second of counts; what it commits is
   * seen by every instance at once, as before); on PGlite the same handle as `db`.
   */
  readonly counters: Kysely<DB>;
  /**
   * For the event tail's reads (src/service/event-tail.ts), which every live stream waits on: on
   * PostgreSQL a pool of one connection of its own, so writes queued for the operations' pool never
   * hold the streams back; on PGlite the same handle as `db`.
   */
  readonly tail: Kysely<DB>;
  readonly engine: Engine;
  /**
   * The operations' pool now: its connections, and the calls waiting for one (pg-pool's public
   * `waitingCount`), read by load shedding (src/service/admission.ts). PGlite queues nothing here.
   */
  poolLoad(): { readonly size: number; readonly waiting: number };
  /** Runs a multi-statement SQL script on one connection; returns the rows of its last statement. */
  runScript(sql: string): Promise<Record<string, unknown>[]>;
  /**
   * Calls `onNotify` for every NOTIFY on `channel`, from any instance, once the returned promise
   * has resolved and until its stop function is called; the channel is LISTENed only meanwhile.
   * PostgreSQL: one connection for all channels, re-opened after a drop, with `onNotify` called
   * once after each reconnect since notifies may have been missed. A wake-up only: payloads carry
   * nothing.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  /**
   * A streaming standby for reads that may be stale (BATON_DATABASE_REPLICA_URL, PostgreSQL only):
   * its own small pool with the same timeouts. Undefined when none is configured. Whether it is
   * used, and when it is not, is the service's choice (src/service/replica-reads.ts).
   */
  readonly replica?: Kysely<DB> | undefined;
  close(): Promise<void>;
}

// int8 as a JS string keeps full precision; the API never exposes it as a number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => value);

export interface PostgresOptions {
  readonly timeouts?: PostgresTimeouts;
  /**
   * Send parameterised statements as named prepared statements, planned once per connection
   * (default). Off for a pooler that does not keep sessions, such as PgBouncer in transaction mode.
   */
  readonly preparedStatements?: boolean;
  readonly onQuery?: QueryListener;
  /** Traces each statement (tracing on); nothing is timed without it. */
  readonly trace?: QueryTracer | undefined;
  /** Told when a pooled connection fails (terminated backend, reset network); the pool replaces it. */
  readonly onConnectionError?: (error: Error) => void;
  /** A standby's URL for reads that may be stale (`Database.replica`). */
  readonly replicaUrl?: string | undefined;
  /** Where LISTEN connects, when not through `url` (a pooler that keeps no sessions drops notifications). */
  readonly listenUrl?: string | undefined;
}

/**
 * PostgreSQL at `url`: one host, or several as libpq lists them (`host1:5432,host2:5432`, with
 * `target_session_attrs=read-write` to follow the primary across a failover). The pools and the
 * LISTEN connection share one rotation, so they all move to the new primary together.
 */
export function openPostgres(url: string, poolSize: number, options: PostgresOptions = {}): Database {
  const rotation = hostRotation(parsePostgresHosts(url));
  const pool = openPool(rotation, poolSize, options);
  const counterPool = openCounterPool(rotation, poolSize, options);
  const tailPool = openPool(rotation, 1, options);
  // LISTEN needs a session: through a pooler that keeps none, it goes to the database directly.
  const listenRotation = options.listenUrl === undefined ? rotation : hostRotation(parsePostgresHosts(options.listenUrl));
  const notifications = postgresNotifications(listenRotation, options.timeouts ?? DEFAULT_TIMEOUTS);
  const statements = preparedStatements(options.preparedStatements ?? true);
  // Connections each pool has checked for writes (multi-host URLs); a pooled one is checked once.
  const checked = new WeakSet<pg.PoolClient>();
  const replica = options.replicaUrl === undefined ? undefined : openReplicaPool(options.replicaUrl, poolSize, options, statements);
  return {
    replica: replica?.db,
    db: new Kysely<DB>({ dialect: new PostgresDialect({ pool: kyselyPool(pool, statements, rotation, checked) }), ...queryLog(options.onQuery, options.trace) }),
    counters: new Kysely<DB>({ dialect: new PostgresDialect({ pool: kyselyPool(counterPool, statements, rotation, checked) }), ...queryLog(options.onQuery, options.trace) }),
    tail: new Kysely<DB>({ dialect: new PostgresDialect({ pool: kyselyPool(tailPool, statements, rotation, checked) }), ...queryLog(options.onQuery, options.trace) }),
    engine: 'postgres',
    poolLoad: () => ({ size: poolSize, waiting: pool.waitingCount }),
    async runScript(sql) {
      const client = await connectWritable(pool, rotation, checked);
      let result: pg.QueryResult | pg.QueryResult[];
      try {
        result = (await client.query(sql)) as pg.QueryResult | pg.QueryResult[];
      } catch (error) {
        // As pg's pool.query does: the session may be left inside the script's failed transaction.
        client.release(error as Error);
        throw error;
      }
      client.release();
      const last = Array.isArray(result) ? result.at(-1) : result;
      return (last?.rows ?? []) as Record<string, unknown>[];
    },
    listen: notifications.listen,
    async close() {
      await notifications.close();
      await Promise.all([pool.end(), counterPool.end(), tailPool.end(), replica?.pool.end()]);
    },
  };
}

/**
 * The standby's pool: as small as the counters' (a replica serves lists, searches and exports,
 * not the hot write path), the same timeouts and prepared-statement setting, and its own host
 * rotation, so a standby that refuses connections never moves the primary's. Its sessions take
 * no writes; a read-only transaction on a hot standby binds a workspace as on the primary.
 */
function openReplicaPool(url: string, poolSize: number, options: PostgresOptions, statements: PreparedStatements): { db: Kysely<DB>; pool: pg.Pool } {
  const rotation = hostRotation({ ...parsePostgresHosts(url), readWrite: false });
  const pool = openPool(rotation, Math.max(2, Math.ceil(poolSize / 2)), options);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: kyselyPool(pool, statements, rotation, new WeakSet()) }), ...queryLog(options.onQuery, options.trace) });
  return { db, pool };
}

/**
 * Kysely's `log` option reporting each statement to `onQuery` and `trace`; none without either, so
 * Kysely times nothing. Kysely calls it in the caller's async context, so a traced statement is a
 * child of the caller's span.
 */
function queryLog(onQuery: QueryListener | undefined, trace: QueryTracer | undefined): { log?: (event: LogEvent) => void } {
  if (!onQuery && !trace) return {};
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') onQuery?.(event.query.sql);
      trace?.(event.query.sql, event.queryDurationMillis, event.level === 'error' ? event.error : undefined);
    },
  };
}

export interface PgliteOptions {
  /** A data directory on disk; omitted means in memory. */
  dataDir?: string;
  /** A tarball of a migrated data directory to start from (tests). */
  loadDataDir?: Blob;
  onQuery?: QueryListener;
  /** Traces each statement (tracing on). */
  trace?: QueryTracer | undefined;
}

export interface PgliteDatabase extends Database {
  /** A tarball of the data directory, to start other instances from (tests clone a migrated one per file). */
  dump(): Promise<Blob>;
}

export async function openPglite(options: PgliteOptions): Promise<PgliteDatabase> {
  if (options.dataDir) await ownerOnlyDirectory(options.dataDir);
  const lock = options.dataDir ? await lockDataDir(options.dataDir) : undefined;
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(options.dataDir, options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
  } catch (error) {
    // The kernel lock lives as long as its open file: let the directory go with the failed start.
    await lock?.release();
    throw error;
  }
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }), ...queryLog(options.onQuery, options.trace) });
  return {
    db,
    counters: db,
    tail: db,
    engine: 'pglite',
    poolLoad: () => ({ size: 1, waiting: 0 }),
    async runScript(sql) {
      const results = await pglite.exec(sql);
      return (results.at(-1)?.rows ?? []);
    },
    async listen(channel, onNotify) {
      const stop = await pglite.listen(channel, () => onNotify());
      return () => stop();
    },
    close: () => pglite.close().finally(() => lock?.release()),
    dump: () => pglite.dumpDataDir('none'),
  };
}

/**
 * Makes `dir` if need be, readable by its owner only, as PostgreSQL insists for its own: PGlite
 * writes some of its files world-writable. A directory an earlier release made wider is narrowed.
 */
async function ownerOnlyDirectory(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  if (((await stat(dir)).mode & 0o077) !== 0) await chmod(dir, 0o700);
}
