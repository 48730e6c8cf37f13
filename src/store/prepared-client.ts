import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import pg from 'pg';

/** Distinct statements one connection prepares at most; past it, further texts run unprepared. */
const MAX_PREPARED_PER_CONNECTION = 2_000;

/**
 * Put first in a statement's text, it makes the statement its transaction's last: the client
 * sends `COMMIT` with it, under the same Sync, and answers the `commit` that follows without a
 * round trip. For a statement that must fail, not commit, when it finds it cannot do its work
 * (raise an error in SQL). Elsewhere (PGlite) it is a comment and the transaction commits as usual.
 */
export const THEN_COMMIT = '/* then commit */';

/**
 * A `pg.Client` that sends every parameterised statement as a named prepared statement, so
 * PostgreSQL parses and plans each distinct SQL text once per connection instead of on every
 * call. Planning Baton's task statements (task columns with their subselects) cost more than
 * running them: 0.6–1.9 ms against 0.25 ms for the claim pick, measured with EXPLAIN ANALYZE.
 *
 * The name is a hash of the text, so the same text always maps to the same name and pg's own
 * per-connection cache (`parsedStatements`) decides whether to send Parse again. Statements
 * without parameters keep the simple protocol, which multi-statement scripts need.
 *
 * A transaction's `begin` and `commit` take no round trip of their own: `begin` goes out with
 * the transaction's first statement, and `commit` with a statement marked `THEN_COMMIT`, each in
 * the same write and under the same Sync (`FramedQuery`). On these machines a round trip costs
 * about 0.1–0.2 ms of CPU on each side, most of what a write costs, and the commit no longer
 * waits a round trip behind the write's last statement, which holds the event-append lock.
 */
export class PreparingClient extends pg.Client {
  constructor(config?: string | pg.ClientConfig) {
    super(config);
    const prepared = new Set<string>();
    /** What each statement prepared on this connection answers with, from its first RowDescription. */
    const shapes = new Map<string, RowShape>();
    const query = this.query.bind(this) as (...args: unknown[]) => unknown;
    /** Named prepared, if this connection may still prepare it. */
    const preparable = (text: string): string | undefined => {
      const name = statementName(text);
      if (!prepared.has(name) && prepared.size >= MAX_PREPARED_PER_CONNECTION) return undefined;
      prepared.add(name);
      return name;
    };
    /** `begin` was answered but not sent yet. */
    let beginPending = false;
    /** Between `begin` and its `commit` or `rollback`: only there may a statement commit. */
    let inTransaction = false;
    /** A THEN_COMMIT statement committed the transaction; the `commit` that follows is answered here. */
    let committed = false;
    // pg's query() has many overloads; only (text[, values[, callback]]), the form Kysely and pool.query use, is rewritten.
    this.query = ((...args: unknown[]) => {
      const [text, values, callback] = args;
      if (typeof text !== 'string' || args.length > 3 || (values !== undefined && !Array.isArray(values))) return query(...args);
      const parameters = (values ?? []) as unknown[];
      const done = typeof callback === 'function' ? (callback as Callback) : undefined;
      const verb = parameters.length === 0 ? transactionVerb(text) : undefined;
      if (committed) {
        committed = false;
        if (verb === 'commit') return answer(EMPTY_RESULTS.commit, done);
        // A rollback after the commit has nothing to undo; anything else would run outside the transaction.
        if (verb !== 'rollback') return answer(new Error(`a statement was sent after ${THEN_COMMIT} committed its transaction`), done);
      }
      if (verb === 'commit' || verb === 'rollback') inTransaction = false;
      if (verb === 'begin' && !inTransaction) {
        beginPending = true;
        inTransaction = true;
        return answer(EMPTY_RESULTS.begin, done);
      }
      const name = parameters.length > 0 ? preparable(text) : undefined;
      const begin = beginPending;
      beginPending = false;
      // Nothing was sent since `begin`, so there is no transaction to end.
      if (begin && (verb === 'commit' || verb === 'rollback')) return answer(EMPTY_RESULTS[verb], done);
      const commit = name !== undefined && inTransaction && text.startsWith(THEN_COMMIT);
      if (name && (begin || commit)) {
        const statement = new FramedQuery({ name, text, values: parameters }, shapes, { begin, commit });
        const sent = send(statement);
        if (commit) {
          void sent.then(
            () => {
              committed = true;
              inTransaction = false;
            },
            () => undefined,
          );
        }
        return reply(sent, done);
      }
      // A statement without parameters goes by the simple protocol, after `begin` has been answered.
      if (begin) return reply(send(new pg.Query('begin')).then(() => query(text, parameters)), done);
      if (!name) return query(...args);
      // pool.query(text, values) arrives here with a callback as the third argument.
      return reply(send(new PreparedQuery({ name, text, values: parameters }, shapes)), done);
    }) as pg.Client['query'];

    const send = (statement: pg.Query | QueryInternals): Promise<unknown> =>
      new Promise((resolve, reject) => {
        (statement as QueryInternals).callback = (error, result) => (error ? reject(error) : resolve(result));
        query(statement);
      });
  }
}

type Callback = (error: Error | null, result?: unknown) => void;

/** The promise, or nothing when the caller passed a callback (pg's two calling conventions). */
function reply(result: Promise<unknown>, done: Callback | undefined): unknown {
  if (!done) return result;
  result.then((value) => done(null, value), (error: unknown) => done(error as Error));
  return undefined;
}

type TransactionVerb = 'begin' | 'commit' | 'rollback';

/** `begin`, `commit` or `rollback` when `text` is exactly that (as Kysely and the baselines send them). */
function transactionVerb(text: string): TransactionVerb | undefined {
  const verb = text.trim().toLowerCase();
  return verb === 'begin' || verb === 'commit' || verb === 'rollback' ? verb : undefined;
}

/** What pg answers for a `begin`, `commit` or `rollback`: no rows, no fields. */
const EMPTY_RESULTS: Record<TransactionVerb, object> = {
  begin: { command: 'BEGIN', rowCount: null, oid: null, rows: [], fields: [] },
  commit: { command: 'COMMIT', rowCount: null, oid: null, rows: [], fields: [] },
  rollback: { command: 'ROLLBACK', rowCount: null, oid: null, rows: [], fields: [] },
};

/** Answers without sending anything, on the next tick as pg would. */
function answer(result: object, done: Callback | undefined): unknown {
  const outcome = result instanceof Error ? Promise.reject(result) : Promise.resolve(result);
  return reply(outcome, done);
}

/** The parts of pg's connection (lib/connection.js) a query writes its messages with. */
interface Connection {
  parse(message: { name: string; text: string }): void;
  bind(message: { portal: string; statement: string | undefined; values: unknown[]; binary?: boolean | undefined; valueMapper?: (value: unknown) => unknown }): void;
  close(message: { type: 'S'; name: string | undefined }): void;
  execute(message: { portal: string; rows?: number }): void;
  sync(): void;
  submittedNamedStatements: Record<string, string | undefined>;
}

/** The parts of pg's Query (lib/query.js) that are not in its type declarations. */
interface QueryInternals {
  name: string | undefined;
  portal: string;
  values: unknown[];
  binary: boolean | undefined;
  rows: number | undefined;
  callback: Callback | undefined;
  _result: ResultInternals;
  _accumulateRows: boolean;
  _canceledDueToError: unknown;
  emit(event: 'row', row: object, result: ResultInternals): boolean;
  hasBeenParsed(connection: Connection): boolean;
  handleRowDescription(message: unknown): void;
  handleDataRow(message: { fields: (string | null)[] }): void;
  prepare(connection: Connection): void;
  _getRows(connection: Connection, rows: number | undefined): void;
  handleCommandComplete(message: unknown, connection: Connection): void;
  handleError(error: Error, connection: Connection): void;
}

/** The parts of pg's Result (lib/result.js) that `addFields` sets from a RowDescription. */
interface ResultInternals {
  fields: { name: string; format: string }[];
  rows: object[];
  _parsers: ((text: string) => unknown)[] | undefined;
  _prebuiltEmptyResultObject: object | null;
}

/** A prepared statement's RowDescription, as pg's Result keeps it once read. */
interface RowShape {
  readonly fields: ResultInternals['fields'];
  readonly parsers: ResultInternals['_parsers'];
  readonly empty: object | null;
  /** Makes one row; absent when a column is binary or named `__proto__` (pg's own parseRow serves those). */
  readonly build: RowBuilder | undefined;
}

type RowBuilder = (values: readonly (string | null)[], parsers: readonly ((text: string) => unknown)[]) => object;

/**
 * A function that makes the row object of one column list as an object literal. pg copies a
 * template object and sets each column by name, at call sites shared by every statement: in a
 * process that has run more than four column lists they go megamorphic, and a task row cost
 * about 4 µs more than in a process that has seen few (the bench baseline). Each list gets its
 * own function here, so each of its sites sees one shape. The names are JSON string literals, and
 * duplicate names keep pg's order and last-wins value.
 */
function rowBuilder(fields: ResultInternals['fields']): RowBuilder | undefined {
  if (fields.some((field) => field.format !== 'text' || field.name === '__proto__')) return undefined;
  const properties = fields.map(({ name }, i) => `${JSON.stringify(name)}: values[${i}] === null ? null : parsers[${i}](values[${i}])`);
  // eslint-disable-next-line @typescript-eslint/no-implied-eval -- generated from JSON-quoted column names only, once per column list
  return new Function('values', 'parsers', `return { ${properties.join(', ')} };`) as RowBuilder;
}

const Query = pg.Query as unknown as new (text: string, values: unknown[]) => QueryInternals;
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (value: unknown) => unknown };

/**
 * A named prepared statement that asks for its RowDescription only the first time it runs on a
 * connection. pg describes the portal on every run and rebuilds the row template from the answer
 * (a dictionary object per column list: about 8 µs for a task's columns, the largest single cost
 * of a request in the server's profile). A prepared statement's columns cannot change while it
 * exists (PostgreSQL refuses to run it instead), so the first answer serves every later run.
 */
class PreparedQuery extends Query {
  readonly #shapes: Map<string, RowShape>;
  #build: RowBuilder | undefined;

  constructor(config: { name: string; text: string; values: unknown[] }, shapes: Map<string, RowShape>) {
    // Given a config object, pg copies it property by property (Object.defineProperties); given the text, it does not.
    super(config.text, config.values);
    this.name = config.name;
    this.#shapes = shapes;
  }

  override prepare(connection: Connection): void {
    const shape = this.name === undefined ? undefined : this.#shapes.get(this.name);
    if (!shape || !this.hasBeenParsed(connection)) return super.prepare(connection);
    // pg's prepare without Parse (done) and Describe (known).
    try {
      connection.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: prepareValue });
    } catch (error) {
      connection.close({ type: 'S', name: this.name });
      connection.sync();
      this.handleError(error as Error, connection);
      return;
    }
    const result = this._result;
    result.fields = shape.fields;
    result._parsers = shape.parsers;
    result._prebuiltEmptyResultObject = shape.empty;
    this.#build = shape.build;
    // As pg's handleRowDescription decides for a query with a callback, which every query sent here has.
    this._accumulateRows = true;
    this._getRows(connection, this.rows);
  }

  override handleRowDescription(message: unknown): void {
    super.handleRowDescription(message);
    if (this.name === undefined || this.#shapes.has(this.name)) return;
    const { fields, _parsers: parsers, _prebuiltEmptyResultObject: empty } = this._result;
    const shape = { fields, parsers, empty, build: rowBuilder(fields) };
    this.#shapes.set(this.name, shape);
    this.#build = shape.build;
  }

  /** pg's handleDataRow, with the row made by the column list's own function when there is one. */
  override handleDataRow(message: { fields: (string | null)[] }): void {
    const build = this.#build;
    const parsers = this._result._parsers;
    if (!build || !parsers) return super.handleDataRow(message);
    if (this._canceledDueToError) return;
    let row: object;
    try {
      row = build(message.fields, parsers);
    } catch (error) {
      this._canceledDueToError = error;
      return;
    }
    this.emit('row', row, this._result);
    if (this._accumulateRows) this._result.rows.push(row);
  }
}

/** Parse, Bind and Execute of an unnamed statement without parameters: `BEGIN` or `COMMIT`. */
function sendUnnamed(connection: Connection, text: 'BEGIN' | 'COMMIT'): void {
  connection.parse({ name: '', text });
  connection.bind({ portal: '', statement: '', values: [] });
  connection.execute({ portal: '' });
}

/**
 * A named prepared statement framed, under one Sync, by an unnamed `BEGIN` before it and/or an
 * unnamed `COMMIT` after it. pg corks the stream around `prepare`, so all of it goes out in one
 * write. When a message fails, PostgreSQL skips the rest up to the Sync: the statement never runs
 * outside its transaction, and a failed statement is never committed.
 *
 * The replies hold a CommandComplete for each part; only the statement's is the caller's result.
 * pg's client records every ParseComplete under the active query's `name`, so the name is withheld
 * until `BEGIN` has completed: only the statement's own ParseComplete marks it as prepared.
 */
class FramedQuery extends PreparedQuery {
  readonly #name: string;
  readonly #frame: { begin: boolean; commit: boolean };
  #completed = 0;

  constructor(config: { name: string; text: string; values: unknown[] }, shapes: Map<string, RowShape>, frame: { begin: boolean; commit: boolean }) {
    super(config, shapes);
    this.#name = config.name;
    this.#frame = frame;
  }

  override prepare(connection: Connection): void {
    if (this.#frame.begin) sendUnnamed(connection, 'BEGIN');
    super.prepare(connection);
    if (this.#frame.begin) this.name = undefined;
  }

  override _getRows(connection: Connection, rows: number | undefined): void {
    if (!this.#frame.commit) return super._getRows(connection, rows);
    connection.execute({ portal: '' });
    sendUnnamed(connection, 'COMMIT');
    connection.sync();
  }

  override handleCommandComplete(message: unknown, connection: Connection): void {
    const part = this.#completed++;
    if (this.#frame.begin && part === 0) {
      this.name = this.#name;
      return;
    }
    if (part === (this.#frame.begin ? 1 : 0)) super.handleCommandComplete(message, connection);
  }

  override handleError(error: Error, connection: Connection): void {
    // `BEGIN` failed, so PostgreSQL skipped the statement's Parse: it must be sent again next time.
    if (this.#frame.begin && this.#completed === 0) delete connection.submittedNamedStatements[this.#name];
    super.handleError(error, connection);
  }
}

const names = new Map<string, string>();

/** `b_` + 20 hex digits of the text's SHA-1; memoised, since the same few texts repeat. */
function statementName(text: string): string {
  let name = names.get(text);
  if (name === undefined) {
    name = `b_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    if (names.size >= 10_000) names.clear();
    names.set(text, name);
  }
  return name;
}
