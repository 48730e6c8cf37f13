/**
 * How store code talks to the database, in one way on both engines:
 *
 * - Reads and single writes take the `Kysely<DB>` handle and use the query builder, or `sql`
 *   templates for what the builder cannot say.
 * - A write of several statements runs in `db.transaction().execute(async (tx) => …)`, Kysely's own
 *   transaction: it commits when the function returns and rolls back when anything inside throws.
 *   Store functions that lock or write several rows take the transaction (`Tx`), so they cannot be
 *   called outside one.
 * - A hot statement whose SQL is fixed text (CTE merges the builder cannot express) goes through
 *   `sendStatement`, Kysely's public `executeQuery` on the same handle or transaction. Its text is
 *   a constant of the code: values always go in parameters (`$1`…`$n`), never into the text, so
 *   the set of statements the database prepares is fixed by the code, not by callers.
 */
import { CompiledQuery, type Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.ts';

/** An open transaction (Kysely's): everything sent on it commits or rolls back together. */
export type Tx = Transaction<DB>;

/** What a statement answers: its rows, and the count of rows an INSERT, UPDATE or DELETE touched. */
export interface Answer<R> {
  readonly rows: R[];
  readonly affected: number | undefined;
}

/** Hears each SQL statement sent (tests count queries with it). */
export type QueryListener = (sql: string) => void;

/** Sends one fixed-text statement with its parameters, inside the transaction when `db` is one. */
export async function sendStatement<R>(db: Kysely<DB>, text: string, parameters: readonly unknown[]): Promise<Answer<R>> {
  const result = await db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]));
  return { rows: result.rows, affected: result.numAffectedRows === undefined ? undefined : Number(result.numAffectedRows) };
}
