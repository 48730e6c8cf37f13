/**
 * Binding a transaction to one workspace (migration 0260, spec/identity.md "Workspaces").
 *
 * Inside a bound transaction the statements run as the database role `baton_tenant`, which
 * row-level security keeps to the rows whose `workspace_id` is the transaction's: a query that
 * forgets the workspace still sees, counts and changes nothing of another, and a row it inserts
 * takes the workspace by default. Unbound, the service acts as the tables' owner, across every
 * workspace: for its own work (authentication, sign-in, workers), never for a caller's operation.
 */
import { type Kysely, type RawBuilder, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB } from './schema.ts';

/** The workspace every row of an install older than workspaces moved into, and the first workspace of a new one. */
export const DEFAULT_WORKSPACE_ID = 'wsp_00000000000000000000000000';

/** The database role a bound transaction acts as (created by migration 0260). */
export const TENANT_ROLE = 'baton_tenant';

/**
 * How PostgreSQL plans the transaction's statements: `auto` as it would (a custom plan while one
 * looks cheaper than the statement's generic plan), or `generic`, the statement's one plan per
 * connection (`plan_cache_mode = force_generic_plan`), for a hot write whose custom plans cost more
 * to make than to run.
 */
export type Plans = 'auto' | 'generic';

/**
 * Binds the open transaction to `workspaceId` until it ends (the settings are transaction-local).
 * `principalId`, the caller, lets it also read the names of the other workspaces its person belongs to.
 */
export async function bindWorkspace(tx: Tx, workspaceId: string, principalId = '', plans: Plans = 'auto'): Promise<void> {
  // In the same statement: a round trip costs more than the setting.
  const generic = plans === 'generic' ? sql`, set_config('plan_cache_mode', 'force_generic_plan', true)` : sql``;
  await sql`SELECT set_config('role', ${TENANT_ROLE}, true), set_config('baton.workspace', ${workspaceId}, true), set_config('baton.principal', ${principalId}, true)${generic}`.execute(tx);
}

/** Runs `work` in its own transaction bound to `workspaceId` (for `principalId`); commits when it returns. */
export function inWorkspace<T>(db: Kysely<DB>, workspaceId: string, work: (tx: Tx) => Promise<T>, principalId = '', plans: Plans = 'auto'): Promise<T> {
  return db.transaction().execute(async (tx) => {
    await bindWorkspace(tx, workspaceId, principalId, plans);
    return work(tx);
  });
}

/** Every workspace's id, oldest first: the workers visit each in turn, bound to it. */
export async function workspaceIds(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('workspaces').select('id').orderBy('created_at').orderBy('id').execute();
  return rows.map((row) => row.id);
}

/** Rows of one table a worker's pass has work for: `where` is the filter its own statements use. */
export interface DueRows {
  readonly from: Extract<keyof DB, string>;
  readonly where: RawBuilder<boolean>;
}

/**
 * The workspaces, in id order, holding rows any of `due` selects, read unbound (across every
 * workspace) in one statement: a pass then opens its bound transactions in those alone, not in
 * every workspace every second (an idle server with 100 workspaces made 380 transactions a second
 * that way; bench/idle.ts).
 */
export async function workspacesWith(db: Kysely<DB>, due: readonly DueRows[]): Promise<string[]> {
  const parts = due.map((d) => sql`SELECT DISTINCT workspace_id FROM ${sql.table(d.from)} WHERE ${d.where}`);
  const { rows } = await sql<{ workspace_id: string }>`${sql.join(parts, sql` UNION `)} ORDER BY workspace_id`.execute(db);
  return rows.map((row) => row.workspace_id);
}
