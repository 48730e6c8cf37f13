import {
  type DatabaseConnection,
  DefaultQueryExecutor,
  type Dialect,
  type Driver,
  Kysely,
  type LogEvent,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
} from 'kysely';
import type { DB } from './schema.ts';

/** What a statement answers: its rows, and the count of rows an INSERT, UPDATE or DELETE touched. */
export interface Answer<R> {
  readonly rows: R[];
  readonly affected: number | undefined;
}

/** Sends one statement with its parameters on a connection (or a pool) and answers with its rows. */
export type Send = <R>(text: string, parameters: readonly unknown[]) => Promise<Answer<R>>;

/** Hears each SQL statement sent (tests count queries with it). */
export type QueryListener = (sql: string) => void;

declare const inTransaction: unique symbol;

/**
 * A handle whose every statement runs on one connection inside one open transaction. Store
 * functions that lock or write take a `Tx`, so they cannot be called outside one.
 */
export type Tx = Kysely<DB> & { readonly [inTransaction]: true };

/** How a handle sends a statement without the query builder, and opens a transaction. */
interface Direct {
  send: Send;
  /** Absent on a `Tx`: transactions do not nest. */
  transaction?: <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;
}

/**
 * The direct path behind each handle `database.ts` made: a pool's, a counter pool's, a
 * transaction's. It is a symbol property of the handle rather than a WeakMap entry: every
 * transaction makes a handle, and each WeakMap key is an ephemeron the garbage collector must
 * trace.
 */
const DIRECT = Symbol('baton.direct');

type WithDirect = Kysely<DB> & { [DIRECT]?: Direct };

/** Makes `db` answer `sendStatement` and `transaction` through `how`. */
export function registerDirect(db: Kysely<DB>, how: Direct): void {
  (db as WithDirect)[DIRECT] = how;
}

function directOf(db: Kysely<DB>): Direct {
  const how = (db as WithDirect)[DIRECT];
  if (!how) throw new Error('this Kysely handle was not made by store/database.ts, so it has no direct path');
  return how;
}

/**
 * Sends a statement whose SQL text is fixed (written with `$1`…`$n`), bypassing the query
 * builder: on the hot paths, building the text and running it through Kysely's executor cost more
 * CPU than pg's own work for the statement (bench/RESULTS.md). Runs inside the transaction when
 * `db` is a `Tx`.
 */
export function sendStatement<R>(db: Kysely<DB>, text: string, parameters: readonly unknown[]): Promise<Answer<R>> {
  return directOf(db).send<R>(text, parameters);
}

/**
 * Runs `work` in one transaction: commits when it returns, rolls back when it throws (the error is
 * passed on). The `Tx` it gets serves the query builder and `sendStatement` alike, on the same connection.
 */
export function transaction<T>(db: Kysely<DB>, work: (tx: Tx) => Promise<T>): Promise<T> {
  const open = directOf(db).transaction;
  if (!open) throw new Error('a transaction cannot open inside another');
  return open(work);
}

/**
 * Runs `work` with a Kysely instance whose queries all go through `send` (one connection the
 * caller has begun a transaction on), registered so that `sendStatement` uses the same connection.
 * The handle refuses any statement once `work` has settled, so a reference kept past the
 * transaction cannot run on whatever the connection does next.
 */
export async function withTransactionHandle<T>(send: Send, work: (tx: Tx) => Promise<T>): Promise<T> {
  let open = true;
  const guarded: Send = (text, parameters) => (open ? send(text, parameters) : Promise.reject(new Error('a statement was sent on a transaction that has ended')));
  const tx = transactionHandle(guarded);
  registerDirect(tx, { send: guarded });
  try {
    return await work(tx);
  } finally {
    open = false;
  }
}

/** `send`, reporting each statement to `onQuery` first. */
export function reporting(send: Send, onQuery: QueryListener | undefined): Send {
  if (!onQuery) return send;
  return (text, parameters) => {
    onQuery(text);
    return send(text, parameters);
  };
}

/** Kysely's `log` option reporting each statement to `onQuery`; nothing without one. */
export function queryLog(onQuery: QueryListener | undefined): { log?: (event: LogEvent) => void } {
  if (!onQuery) return {};
  return {
    log: (event: LogEvent) => {
      if (event.level === 'query') onQuery(event.query.sql);
    },
  };
}

const refuseNesting = () => Promise.reject(new Error('transactions are opened with store/connection.ts transaction(), never nested'));

/** The caller owns the connection and its transaction; a handle's driver is asked only to open another, and refuses. */
const TRANSACTION_DRIVER: Driver = {
  init: () => Promise.resolve(),
  acquireConnection: refuseNesting,
  releaseConnection: () => Promise.resolve(),
  beginTransaction: refuseNesting,
  commitTransaction: refuseNesting,
  rollbackTransaction: refuseNesting,
  destroy: () => Promise.resolve(),
};

// Shared by every transaction's handle, so opening one builds no compiler, adapter or driver
// (7 µs a transaction when each got its own Kysely from a dialect). Compiling is synchronous and
// starts afresh for each query, as within one Kysely instance.
const COMPILER = new PostgresQueryCompiler();
const ADAPTER = new PostgresAdapter();
const TRANSACTION_DIALECT: Dialect = {
  createAdapter: () => ADAPTER,
  createDriver: () => TRANSACTION_DRIVER,
  createIntrospector: (db) => new PostgresIntrospector(db),
  createQueryCompiler: () => COMPILER,
};

/** A query builder whose every query goes through `send`, on the connection the caller began a transaction on. */
function transactionHandle(send: Send): Tx {
  const connection: DatabaseConnection = {
    async executeQuery<R>(compiled: { sql: string; parameters: readonly unknown[] }): Promise<QueryResult<R>> {
      const { rows, affected } = await send<R>(compiled.sql, compiled.parameters);
      return { rows, ...(affected === undefined ? {} : { numAffectedRows: BigInt(affected) }) };
    },
    streamQuery() {
      throw new Error('streaming is not supported inside a Baton transaction');
    },
  };
  const executor = new DefaultQueryExecutor(COMPILER, ADAPTER, { provideConnection: (consumer) => consumer(connection) }, []);
  return new Kysely<DB>({ config: { dialect: TRANSACTION_DIALECT }, dialect: TRANSACTION_DIALECT, driver: TRANSACTION_DRIVER, executor }) as Tx;
}
