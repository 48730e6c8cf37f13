import { createHash } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { PGlite } from '@electric-sql/pglite';
import { Kysely, type LogEvent, PGliteDialect, PostgresDialect, type PostgresPool, type PostgresPoolClient } from 'kysely';
import pg from 'pg';
import { isDatabaseUnavailable } from '../errors.ts';
import type { QueryListener } from './connection.ts';
import { lockDataDir } from './data-dir-lock.ts';
import { type HostRotation, hostRotation, parsePostgresHosts } from '../postgres-hosts.ts';
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
 * Baton's PostgreSQL pool, as pg makes it, with the timeouts set on every connection. A
 * connection that fails, idle or in use, must not crash the process: pg emits `error` on the
 * client, which is heard here; the request using it gets the error, and the pool drops it. With
 * several hosts, each new connection opens on the rotation's current host (pg-pool's `Client`
 * option); `connectWritable` moves the rotation on.
 */
export function openPool(rotation: HostRotation, poolSize: number, options: PostgresOptions & { sessionOptions?: string } = {}): pg.Pool {
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
async function connectWritable(pool: pg.Pool, rotation: HostRotation, checked: WeakSet<pg.PoolClient>): Promise<pg.PoolClient> {
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

async function takesWrites(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  return rows[0]?.transaction_read_only === 'off';
}

/** What a standby answers a write with (SQLSTATE 25006, read_only_sql_transaction). */
function readOnlyHost(): Error {
  return Object.assign(new Error('No host in DATABASE_URL takes writes now (target_session_attrs=read-write): the primary is down or a standby is being promoted.'), { code: '25006' });
}

/**
 * The pool behind `Database.counters`: a write that only counts (the rate window) is committed
 * without waiting for its WAL flush, which every request, reads included, used to wait for.
 */
export function openCounterPool(rotation: HostRotation, poolSize: number, options: PostgresOptions = {}): pg.Pool {
  return openPool(rotation, Math.max(2, Math.ceil(poolSize / 2)), { ...options, sessionOptions: '-c synchronous_commit=off' });
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

/**
 * Distinct statements one connection prepares at most. PostgreSQL keeps every prepared statement,
 * with its plan, until its backend ends: about 0.12 MB for a task list's, whose text differs with
 * each combination of filters, so 500 of them grew a backend past 60 MB (issue 36 item 10). This
 * many keep a backend under 16 MB whatever mix of lists callers send (bench/README.md, "Prepared
 * statements per backend"), and hold the statements a whole walk of the API sends most often.
 */
export const MAX_PREPARED_PER_CONNECTION = 64;

/**
 * Names for prepared statements, through pg's public `{ name, text, values }`: PostgreSQL parses
 * and plans each text once per connection instead of on every call (planning Baton's task
 * statements costs about as much as running them). The name is a hash of the text, so pg sends
 * Parse only the first time a connection sees it.
 *
 * A migration run by another instance or an operator can change what a prepared statement
 * answers; PostgreSQL then refuses it (`0A000`, "cached plan must not change result type"), on
 * every connection that prepared it. The first such failure starts a new generation of names, so
 * every later call prepares afresh and succeeds: one request fails (with a retryable problem), not
 * every request until a restart.
 */
interface PreparedStatements {
  /** The statement to send for `text` on `client`: named while the connection may still prepare, else unnamed. */
  statement(client: pg.PoolClient, text: string, values: unknown[]): pg.QueryConfig;
  /** Hears a failed statement; a stale prepared statement starts a new generation of names. */
  failed(error: unknown): void;
  /**
   * True once `client` was sent a new text past `MAX_PREPARED_PER_CONNECTION` (that one went
   * unnamed): it is closed when released, and the pool opens a fresh connection, on which the
   * statements in use are prepared again, rather than running every later new text unplanned.
   */
  full(client: pg.PoolClient): boolean;
}

function preparedStatements(enabled: boolean): PreparedStatements {
  let generation = 0;
  const namesByClient = new WeakMap<pg.PoolClient, Set<string>>();
  const full = new WeakSet<pg.PoolClient>();
  return {
    statement(client, text, values) {
      if (!enabled || values.length === 0) return { text, values };
      const name = `baton_${generation}_${createHash('sha1').update(text).digest('base64url')}`;
      let names = namesByClient.get(client);
      if (!names) namesByClient.set(client, (names = new Set()));
      if (!names.has(name)) {
        if (names.size >= MAX_PREPARED_PER_CONNECTION) {
          full.add(client);
          return { text, values };
        }
        names.add(name);
      }
      return { name, text, values };
    },
    failed(error) {
      if (isStalePlan(error)) generation++;
    },
    full: (client) => full.has(client),
  };
}

/** PostgreSQL refused a prepared statement that DDL made stale, or one the connection no longer has. */
function isStalePlan(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '26000' || (code === '0A000' && /cached plan must not change result type/.test(String((error as Error).message)));
}

/**
 * `pool` as Kysely's PostgreSQL dialect asks for one (its public `PostgresPool` interface): each
 * statement goes out named or not as `statements` says, and a connection on which a statement
 * failed for the connection's sake (lost, timed out, holding a stale plan), or that is full of
 * prepared statements, is closed on release rather than reused.
 */
function kyselyPool(pool: pg.Pool, statements: PreparedStatements, rotation: HostRotation, checked: WeakSet<pg.PoolClient>): PostgresPool {
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
function postgresNotifications(rotation: HostRotation, timeouts: PostgresTimeouts): Pick<Database, 'listen' | 'close'> {
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
      const host = rotation.current();
      const next = new pg.Client({ connectionString: rotation.hosts.urls[host], connectionTimeoutMillis: timeouts.connectMs });
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
        // A standby refuses LISTEN; with several hosts, the next one is tried on the retry.
        if (rotation.hosts.readWrite && !(await takesWrites(next))) throw readOnlyHost();
      } catch (error) {
        if (!closed) rotation.passOver(host);
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
  /** Traces each statement (tracing on). */
  trace?: QueryTracer | undefined;
}

export interface PgliteDatabase extends Database {
  /** A tarball of the data directory, to start other instances from (tests clone a migrated one per file). */
  dump(): Promise<Blob>;
}

export async function openPglite(options: PgliteOptions): Promise<PgliteDatabase> {
  // Owner only, as PostgreSQL insists for its own: PGlite writes some of its files world-writable.
  if (options.dataDir) await mkdir(options.dataDir, { recursive: true, mode: 0o700 });
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
