import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type LogEvent, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import { PreparingClient } from './prepared-client.ts';
import type { DB } from './schema.ts';

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
  readonly engine: Engine;
  /** Runs a multi-statement SQL script on one connection; returns the rows of its last statement. */
  runScript(sql: string): Promise<Record<string, unknown>[]>;
  /**
   * Calls `onNotify` for every NOTIFY on `channel`, from any instance (PostgreSQL: one dedicated
   * connection, re-opened after a drop, with `onNotify` called once after each reconnect since
   * notifies may have been missed). A wake-up only: payloads carry nothing. Returns the stop function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

// int8 as a JS string keeps full precision; the API never exposes it as a number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => value);

/** Hears each SQL statement the query builder sends (tests count queries with it). */
export type QueryListener = (sql: string) => void;

function logTo(onQuery: QueryListener | undefined) {
  if (!onQuery) return {};
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') onQuery(event.query.sql);
    },
  };
}

/**
 * Baton's PostgreSQL pool: statements go out prepared (PreparingClient), and a dropped idle
 * connection must not crash the process (the pool replaces it). The benchmark baselines use it too,
 * so they send the same SQL the same way.
 */
export function openPool(url: string, poolSize: number, options?: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: poolSize, Client: PreparingClient, ...(options ? { options } : {}) });
  pool.on('error', () => undefined);
  return pool;
}

/**
 * The pool behind `Database.counters`: a write that only counts (the rate window) is committed
 * without waiting for its WAL flush, which every request, reads included, used to wait for.
 */
export function openCounterPool(url: string, poolSize: number): pg.Pool {
  return openPool(url, Math.max(2, Math.ceil(poolSize / 2)), '-c synchronous_commit=off');
}

export function openPostgres(url: string, poolSize: number, onQuery?: QueryListener): Database {
  const pool = openPool(url, poolSize);
  const counterPool = openCounterPool(url, poolSize);
  return {
    db: new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...logTo(onQuery) }),
    counters: new Kysely<DB>({ dialect: new PostgresDialect({ pool: counterPool }), ...logTo(onQuery) }),
    engine: 'postgres',
    async runScript(sql) {
      const result = (await pool.query(sql)) as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(result) ? result.at(-1) : result;
      return (last?.rows ?? []) as Record<string, unknown>[];
    },
    listen: (channel, onNotify) => listenPostgres(url, channel, onNotify),
    async close() {
      await Promise.all([pool.end(), counterPool.end()]);
    },
  };
}

const RELISTEN_DELAY_MS = 1000;

async function listenPostgres(url: string, channel: string, onNotify: () => void): Promise<() => Promise<void>> {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  // Until stopped, a dropped or failed connection is replaced; notifies may have been missed meanwhile.
  const reconnect = () => {
    if (!stopped) retry = setTimeout(() => void connect().then(onNotify, reconnect), RELISTEN_DELAY_MS);
  };
  const connect = async (): Promise<void> => {
    const next = new pg.Client({ connectionString: url });
    next.on('notification', () => onNotify());
    const dropped = () => {
      if (stopped || client !== next) return;
      client = undefined;
      next.end().catch(() => undefined);
      reconnect();
    };
    next.on('error', dropped);
    next.on('end', dropped);
    await next.connect();
    await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    if (stopped) return void (await next.end());
    client = next;
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    await client?.end();
  };
}

export interface PgliteOptions {
  /** A data directory on disk; omitted means in memory. */
  dataDir?: string;
  /** A tarball of a migrated data directory to start from (tests). */
  loadDataDir?: Blob;
  onQuery?: QueryListener;
}

export interface PgliteDatabase extends Database {
  /** A tarball of the data directory, to start other instances from (tests clone a migrated one per file). */
  dump(): Promise<Blob>;
}

export async function openPglite(options: PgliteOptions): Promise<PgliteDatabase> {
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true });
  const pglite = await PGlite.create(options.dataDir, options.loadDataDir ? { loadDataDir: options.loadDataDir } : {});
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }), ...logTo(options.onQuery) });
  return {
    db,
    counters: db,
    engine: 'pglite',
    async runScript(sql) {
      const results = await pglite.exec(sql);
      return (results.at(-1)?.rows ?? []);
    },
    async listen(channel, onNotify) {
      const stop = await pglite.listen(channel, () => onNotify());
      return () => stop();
    },
    close: () => pglite.close(),
    dump: () => pglite.dumpDataDir('none'),
  };
}
