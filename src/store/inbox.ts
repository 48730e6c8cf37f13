import { type Kysely, type Selectable, sql } from 'kysely';
import type { Tx } from './connection.ts';
import { notificationsOf } from './notifications.ts';
import { workspacesWith } from './workspace-scope.ts';
import type { DB, InboxItemsTable, InboxKind, InboxState } from './schema.ts';

export type InboxItemRow = Selectable<InboxItemsTable>;

export interface NewInboxItem {
  id: string;
  principal_id: string;
  kind: InboxKind;
  task_id: string;
  ref_id: string;
  by_id: string;
  excerpt: string;
  created_at: Date;
  /** Set when what it is about is already overdue (spec/asks.md, Escalation). */
  overdue_at?: Date | null;
}

/**
 * Writes items in the caller's transaction, beside the event that caused them, with their
 * notifications (the outbox): one statement, the notifications made from what the insert returns.
 */
export async function insertInboxItems(tx: Tx, items: readonly NewInboxItem[]): Promise<void> {
  if (items.length === 0) return;
  await tx
    .with('items', (db) =>
      db
        .insertInto('inbox_items')
        .values(items.map((i) => ({ ...i, updated_at: i.created_at })))
        .returning(['id', 'principal_id', 'kind', 'created_at']),
    )
    .insertInto('notifications')
    .columns(['inbox_item_id', 'channel', 'principal_id', 'digest', 'next_attempt_at', 'created_at', 'updated_at'])
    .expression(notificationsOf('items'))
    .onConflict((oc) => oc.doNothing())
    .execute();
}

export interface InboxQuery {
  principalId: string;
  states: readonly InboxState[] | undefined;
  kinds: readonly InboxKind[] | undefined;
  taskId: string | undefined;
  beforeId: string | undefined;
  limit: number;
}

/** One page of a principal's inbox, newest first; `limit + 1` rows for has_more. */
export async function listInbox(db: Kysely<DB>, q: InboxQuery): Promise<InboxItemRow[]> {
  let query = db.selectFrom('inbox_items').selectAll().where('principal_id', '=', q.principalId);
  if (q.states) query = query.where('state', 'in', [...q.states]);
  if (q.kinds) query = query.where('kind', 'in', [...q.kinds]);
  if (q.taskId) query = query.where('task_id', '=', q.taskId);
  if (q.beforeId) query = query.where('id', '<', q.beforeId);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/** A principal's items by state: { unread, read, done }. */
export async function inboxCounts(db: Kysely<DB>, principalId: string): Promise<Record<InboxState, number>> {
  const rows = await db
    .selectFrom('inbox_items')
    .select(['state', db.fn.countAll<string>().as('n')])
    .where('principal_id', '=', principalId)
    .groupBy('state')
    .execute();
  const counts: Record<InboxState, number> = { unread: 0, read: 0, done: 0 };
  for (const row of rows) counts[row.state] = Number(row.n);
  return counts;
}

/** Sets the state of the principal's own items among `ids` (others' are left alone); returns those changed. */
export async function markInbox(tx: Tx, principalId: string, ids: readonly string[], state: InboxState, now: Date): Promise<InboxItemRow[]> {
  if (ids.length === 0) return [];
  return tx
    .updateTable('inbox_items')
    .set({ state, updated_at: now })
    .where('principal_id', '=', principalId)
    .where('id', 'in', [...ids])
    .returningAll()
    .execute();
}

/**
 * Marks done the open `approval` items whose approval expired undecided (it reads `expired` from
 * then on, and nobody may decide it); returns how many. Reads the open approval items only (index
 * inbox_items_open_ref).
 */
export async function closeExpiredApprovalItems(tx: Tx, now: Date): Promise<number> {
  const result = await tx.updateTable('inbox_items').set({ state: 'done', updated_at: now }).where(expiredApprovalItem(now)).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Open approval items whose approval expired undecided (of `inbox_items`). */
const expiredApprovalItem = (now: Date) =>
  sql<boolean>`kind = 'approval' AND state <> 'done' AND ref_id IN (SELECT id FROM approvals WHERE status = 'pending' AND expires_at <= ${now})`;

/** The workspaces with an open item of an expired approval: the expiry pass visits only those. */
export function workspacesWithExpiredApprovalItems(db: Kysely<DB>, now: Date): Promise<string[]> {
  return workspacesWith(db, [{ from: 'inbox_items', where: expiredApprovalItem(now) }]);
}

/** Marks done the open items about one thing (an ask that closed), for everyone. */
export async function closeInboxItems(tx: Tx, refId: string, kind: InboxKind, now: Date): Promise<void> {
  await tx.updateTable('inbox_items').set({ state: 'done', updated_at: now }).where('ref_id', '=', refId).where('kind', '=', kind).where('state', '<>', 'done').execute();
}
