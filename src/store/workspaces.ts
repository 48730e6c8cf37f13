import type { Insertable, Kysely, Selectable, Updateable } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB, WorkspacesTable } from './schema.ts';

export type WorkspaceRow = Selectable<WorkspacesTable>;

/** A workspace's own settings; null: the server's default. */
export type WorkspaceSettingsRow = Pick<WorkspaceRow, 'escalate_ask_s' | 'escalate_approval_s' | 'escalate_review_s' | 'escalate_to' | 'rate_limit' | 'chat_webhook_url' | 'event_retention_days'>;

/**
 * The workspaces a bound transaction may see: its own, and the others its person is a member of
 * (row-level security decides, migration 0260), by name.
 */
export async function listVisibleWorkspaces(db: Kysely<DB>): Promise<WorkspaceRow[]> {
  return db.selectFrom('workspaces').selectAll().orderBy('name').orderBy('id').limit(100).execute();
}

/** Inserts a workspace unless its name is taken; answers the row, or undefined when taken. */
export async function insertWorkspace(tx: Tx, row: Insertable<WorkspacesTable>): Promise<WorkspaceRow | undefined> {
  return tx.insertInto('workspaces').values(row).onConflict((oc) => oc.column('name').doNothing()).returningAll().executeTakeFirst();
}

/** The bound transaction's own workspace (row-level security lets it change only that one). */
export async function findWorkspace(db: Kysely<DB>, id: string): Promise<WorkspaceRow | undefined> {
  return db.selectFrom('workspaces').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Sets some of a workspace's settings (null resets one to the server's default); answers the row. */
export async function updateWorkspaceSettings(tx: Tx, id: string, settings: Updateable<WorkspaceSettingsRow>): Promise<WorkspaceRow | undefined> {
  return tx.updateTable('workspaces').set(settings).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Every workspace's id and settings, oldest first, read unbound: the workers' pass over the workspaces. */
export async function listWorkspaceSettings(db: Kysely<DB>): Promise<(WorkspaceSettingsRow & { id: string })[]> {
  return db
    .selectFrom('workspaces')
    .select(['id', 'escalate_ask_s', 'escalate_approval_s', 'escalate_review_s', 'escalate_to', 'rate_limit', 'chat_webhook_url', 'event_retention_days'])
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}
