import type { Kysely, Selectable } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB, WorkspacesTable } from './schema.ts';

export type WorkspaceRow = Selectable<WorkspacesTable>;

/**
 * The workspaces a bound transaction may see: its own, and the others its person is a member of
 * (row-level security decides, migration 0260), by name.
 */
export async function listVisibleWorkspaces(db: Kysely<DB>): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('name').orderBy('id').limit(100).execute();
}

/** Inserts a workspace unless its name is taken; answers the row, or undefined when taken. */
export async function insertWorkspace(tx: Tx, row: WorkspaceRow): Promise<WorkspaceRow | undefined> {
  return tx.insertInto('workspaces').values(row).onConflict((oc) => oc.column('name').doNothing()).returningAll().executeTakeFirst();
}
