import { type Kysely, type RawBuilder, type Selectable, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB, EmailPreference, NotificationChannel, NotificationPreferencesTable, NotificationsTable, WebhookAttempt } from './schema.ts';

export type NotificationRow = Selectable<NotificationsTable>;
export type PreferencesRow = Selectable<NotificationPreferencesTable>;

/**
 * The notifications of inbox items just written, as rows of `notifications` to insert (read from
 * `items`, the name of a set of rows with the items' id, principal_id, kind and created_at: the
 * insert's RETURNING, store/inbox.ts). People only (agents have `wait`, the stream and webhooks): an
 * email when they have an address and have not turned email off (asks, approvals, overdue waits and
 * budgets at once unless they chose `digest`, everything else in the digest), and a chat message
 * for those unless they turned chat off.
 */
export function notificationsOf(items: string): RawBuilder<unknown> {
  return sql`
    SELECT i.id, c.channel, i.principal_id,
           c.channel = 'email' AND (i.kind NOT IN ('ask', 'approval', 'overdue', 'budget') OR coalesce(p.email, 'immediate') = 'digest'),
           i.created_at, i.created_at, i.created_at
    FROM ${sql.table(items)} i
    JOIN agents a ON a.id = i.principal_id AND a.kind = 'human' AND NOT a.disabled
    LEFT JOIN notification_preferences p ON p.principal_id = i.principal_id
    CROSS JOIN (VALUES ('email'), ('chat')) AS c (channel)
    WHERE (c.channel = 'email' AND a.email IS NOT NULL AND coalesce(p.email, 'immediate') <> 'off')
       OR (c.channel = 'chat' AND i.kind IN ('ask', 'approval', 'overdue', 'budget') AND coalesce(p.chat, true))`;
}

/** A person's preferences; the defaults when they never set any. */
export async function findPreferences(db: Kysely<DB>, principalId: string): Promise<{ email: EmailPreference; chat: boolean; updated_at: Date | null }> {
  const row = await db.selectFrom('notification_preferences').selectAll().where('principal_id', '=', principalId).executeTakeFirst();
  return row ?? { email: 'immediate', chat: true, updated_at: null };
}

export async function upsertPreferences(tx: Tx, row: PreferencesRow): Promise<PreferencesRow> {
  return tx
    .insertInto('notification_preferences')
    .values(row)
    .onConflict((oc) => oc.column('principal_id').doUpdateSet({ email: row.email, chat: row.chat, updated_at: row.updated_at }))
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Takes up to `limit` due notifications and pushes their due time to `claimUntil`, so no other
 * instance takes them while they are in flight (they come back if this one dies). A digest row is
 * due once it is `digestBefore` old. Then takes the rest of the pending digest of each person whose
 * digest came due, so one email carries it all.
 */
export async function claimDueNotifications(db: Kysely<DB>, q: { now: Date; digestBefore: Date; claimUntil: Date; limit: number }): Promise<NotificationRow[]> {
  const due = await sql<NotificationRow>`
    UPDATE notifications SET next_attempt_at = ${q.claimUntil}
    WHERE (inbox_item_id, channel) IN (
      SELECT inbox_item_id, channel FROM notifications
      WHERE state = 'pending' AND next_attempt_at <= ${q.now} AND (NOT digest OR created_at <= ${q.digestBefore})
      ORDER BY next_attempt_at LIMIT ${q.limit}
      FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  const people = [...new Set(due.rows.filter((n) => n.digest).map((n) => n.principal_id))];
  if (people.length === 0) return due.rows;
  const rest = await sql<NotificationRow>`
    UPDATE notifications SET next_attempt_at = ${q.claimUntil}
    WHERE (inbox_item_id, channel) IN (
      SELECT inbox_item_id, channel FROM notifications
      WHERE state = 'pending' AND digest AND principal_id = ANY(${people}) AND next_attempt_at < ${q.claimUntil}
      FOR UPDATE SKIP LOCKED)
    RETURNING *`.execute(db);
  return [...due.rows, ...rest.rows];
}

/** Records one attempt at some notifications (a digest is one attempt for all its rows) and their new state. */
export async function recordNotificationAttempt(
  db: Kysely<DB>,
  keys: readonly { inbox_item_id: string; channel: NotificationChannel }[],
  outcome: { state: NotificationRow['state']; attempt: WebhookAttempt | null; nextAttemptAt: Date; now: Date },
): Promise<void> {
  if (keys.length === 0) return;
  await db
    .updateTable('notifications')
    .set({
      state: outcome.state,
      ...(outcome.attempt ? { attempt_count: sql`attempt_count + 1`, attempts: sql`attempts || ${JSON.stringify([outcome.attempt])}::jsonb` } : {}),
      next_attempt_at: outcome.nextAttemptAt,
      updated_at: outcome.now,
    })
    .where(sql<boolean>`(inbox_item_id, channel) IN (${sql.join(keys.map((k) => sql`(${k.inbox_item_id}, ${k.channel})`))})`)
    .execute();
}

export interface NotificationQuery {
  states: readonly NotificationRow['state'][] | undefined;
  channel: NotificationChannel | undefined;
  principalId: string | undefined;
  /** Rows before this (inbox item id, channel), newest first. */
  before: readonly [string, string] | undefined;
  limit: number;
}

/** One page of the outbox, newest first; fetches `limit + 1`. */
export async function listNotifications(db: Kysely<DB>, q: NotificationQuery): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll();
  if (q.states) query = query.where('state', 'in', [...q.states]);
  if (q.channel) query = query.where('channel', '=', q.channel);
  if (q.principalId) query = query.where('principal_id', '=', q.principalId);
  const before = q.before;
  if (before) query = query.where(sql<boolean>`(inbox_item_id, channel) < (${before[0]}, ${before[1]})`);
  return query.orderBy('inbox_item_id', 'desc').orderBy('channel', 'desc').limit(q.limit + 1).execute();
}

/** What a notification is about: its inbox item, the task's title, the ask, and who it is for and by. */
export async function notificationSubjects(db: Kysely<DB>, inboxItemIds: readonly string[]) {
  if (inboxItemIds.length === 0) return [];
  return db
    .selectFrom('inbox_items as i')
    .innerJoin('tasks as t', 't.id', 'i.task_id')
    .innerJoin('agents as p', 'p.id', 'i.principal_id')
    .innerJoin('agents as b', 'b.id', 'i.by_id')
    .leftJoin('asks as k', (j) => j.onRef('k.id', '=', 'i.ref_id').on('i.kind', '=', 'ask'))
    // The item's workspace's chat channel, if it has its own (read unbound, by the sender).
    .innerJoin('workspaces as w', (j) => j.on(sql<boolean>`w.id = i.workspace_id`))
    .select(['i.id', 'i.kind', 'i.task_id', 'i.ref_id', 'i.excerpt', 'i.created_at', 't.title', 'p.name as principal_name', 'p.email', 'b.name as by_name', 'k.question', 'k.options', 'k.due_at', 'w.chat_webhook_url'])
    .where('i.id', '=', (eb) => eb.fn.any(eb.val([...inboxItemIds])))
    .execute();
}

export type NotificationSubject = Awaited<ReturnType<typeof notificationSubjects>>[number];

/** Records a link's one use; false when it was used before. */
export async function useLink(tx: Tx, linkId: string, principalId: string, now: Date): Promise<boolean> {
  const result = await tx.insertInto('notification_links_used').values({ link_id: linkId, principal_id: principalId, used_at: now }).onConflict((oc) => oc.doNothing()).executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
}
