import { mkdir } from 'node:fs/promises';
import { PGlite, type Transaction as PGliteTransaction } from '@electric-sql/pglite';
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely';
import pg from 'pg';
import { type QueryListener, queryLog, registerDirect, reporting, type Send, withTransactionHandle } from './connection.ts';
import { PreparingClient } from './prepared-client.ts';
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
    db: postgresHandle(pool, onQuery),
    counters: postgresHandle(counterPool, onQuery),
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

/** The query builder over `pool`, plus its direct path (`sendStatement`) and its transactions. */
function postgresHandle(pool: pg.Pool, onQuery: QueryListener | undefined): Kysely<DB> {
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }), ...queryLog(onQuery) });
  registerDirect(db, {
    send: reporting(pgSend(pool), onQuery),
    async transaction(work) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await sendVerb(client, 'begin');
        const result = await withTransactionHandle(reporting(pgSend(client), onQuery), work);
        // A transaction a failed statement aborted answers its commit with ROLLBACK: nothing was kept.
        if ((await sendVerb(client, 'commit')).command === 'ROLLBACK') throw new Error('the transaction was aborted by an earlier error, so it rolled back');
        return result;
      } catch (error) {
        await sendVerb(client, 'rollback').catch((failure: unknown) => {
          broken = failure instanceof Error ? failure : new Error(String(failure));
        });
        throw error;
      } finally {
        // A connection that could not roll back is closed, not reused.
        client.release(broken);
      }
    },
  });
  return db;
}

/** `begin`, `commit` or `rollback`: PreparingClient sends the first two along with the transaction's first and last statements. */
function sendVerb(client: pg.PoolClient, verb: 'begin' | 'commit' | 'rollback'): Promise<pg.QueryResult> {
  return client.query(verb);
}

const AFFECTING = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

function pgSend(target: pg.Pool | pg.PoolClient): Send {
  return async <R>(text: string, parameters: readonly unknown[]) => {
    const result = await target.query(text, parameters as unknown[]);
    return { rows: result.rows as R[], affected: AFFECTING.has(result.command) ? (result.rowCount ?? 0) : undefined };
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
  const { onQuery } = options;
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }), ...queryLog(onQuery) });
  registerDirect(db, {
    send: reporting(pgliteSend(pglite), onQuery),
    // PGlite's own transaction holds the instance for its duration, as Kysely's PGlite dialect does.
    transaction: (work) => pglite.transaction((t) => withTransactionHandle(reporting(pgliteSend(t), onQuery), work)),
  });
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

function pgliteSend(target: PGlite | PGliteTransaction): Send {
  return async <R>(text: string, parameters: readonly unknown[]) => {
    const { rows, affectedRows } = await target.query<R>(text, parameters as unknown[]);
    return { rows, affected: affectedRows };
  };
}
