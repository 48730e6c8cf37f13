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
   * Calls `onNotify` for every NOTIFY on `channel`, from any instance, once the returned promise
   * has resolved and until its stop function is called; the channel is LISTENed only meanwhile.
   * PostgreSQL: one connection for all channels, re-opened after a drop, with `onNotify` called
   * once after each reconnect since notifies may have been missed. A wake-up only: payloads carry
   * nothing.
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
  const notifications = postgresNotifications(url);
  return {
    db: postgresHandle(pool, onQuery),
    counters: postgresHandle(counterPool, onQuery),
    engine: 'postgres',
    async runScript(sql) {
      const result = (await pool.query(sql)) as pg.QueryResult | pg.QueryResult[];
      const last = Array.isArray(result) ? result.at(-1) : result;
      return (last?.rows ?? []) as Record<string, unknown>[];
    },
    listen: notifications.listen,
    async close() {
      await notifications.close();
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

interface Channel {
  readonly listeners: Set<() => void>;
  /** Settles once the channel is LISTENed on the current connection (or that failed). */
  ready: Promise<void>;
}

/**
 * One LISTEN connection for every channel of a database, opened on the first `listen` and kept
 * until `close`. A channel is LISTENed while it has a listener and UNLISTENed when its last one
 * stops, so writes notify an instance only while it needs the wake-ups. After a drop the
 * connection is re-opened, its channels LISTENed again, and their listeners called once, since
 * notifies may have been missed meanwhile.
 */
function postgresNotifications(url: string): Pick<Database, 'listen' | 'close'> {
  const channels = new Map<string, Channel>();
  let client: pg.Client | undefined;
  let connecting: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let closed = false;

  const send = (target: pg.Client, verb: 'LISTEN' | 'UNLISTEN', channel: string) => target.query(`${verb} ${pg.escapeIdentifier(channel)}`).then(() => undefined);
  const reconnect = () => {
    if (closed || retry || channels.size === 0) return;
    retry = setTimeout(() => {
      retry = undefined;
      connect().then(() => {
        for (const { listeners } of channels.values()) for (const listener of listeners) listener();
      }, reconnect);
    }, RELISTEN_DELAY_MS);
  };
  const connect = () =>
    (connecting ??= (async () => {
      const next = new pg.Client({ connectionString: url });
      next.on('notification', (message) => {
        for (const listener of channels.get(message.channel)?.listeners ?? []) listener();
      });
      const dropped = () => {
        if (client !== next) return;
        client = undefined;
        next.end().catch(() => undefined);
        reconnect();
      };
      next.on('error', dropped);
      next.on('end', dropped);
      try {
        await next.connect();
        if (closed) throw new Error('the database is closed');
      } catch (error) {
        await next.end().catch(() => undefined);
        throw error;
      } finally {
        connecting = undefined;
      }
      client = next;
      // Channels added from now on LISTEN themselves; these were waiting for the connection.
      for (const [name, channel] of channels) channel.ready = send(next, 'LISTEN', name);
      await Promise.all([...channels.values()].map((c) => c.ready));
    })());

  return {
    async listen(name, onNotify) {
      if (closed) throw new Error('the database is closed');
      const listener = () => onNotify();
      let channel = channels.get(name);
      if (!channel) {
        channel = { listeners: new Set(), ready: client ? send(client, 'LISTEN', name) : connect() };
        channels.set(name, channel);
      }
      const own = channel;
      own.listeners.add(listener);
      const stop = async () => {
        if (!own.listeners.delete(listener) || own.listeners.size > 0 || channels.get(name) !== own) return;
        channels.delete(name);
        if (client) await send(client, 'UNLISTEN', name).catch(() => undefined);
      };
      try {
        await own.ready;
      } catch (error) {
        await stop();
        throw error;
      }
      return stop;
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      channels.clear();
      await connecting?.catch(() => undefined);
      const last = client;
      client = undefined;
      await last?.end();
    },
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
