import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import { type EventRow, selectEvents, settledEvents } from './events.ts';
import type { DB, WebhookAttempt, WebhookDeliveriesTable, WebhooksTable } from './schema.ts';
import type { Tx } from './connection.ts';

export type WebhookRow = Selectable<WebhooksTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

export async function insertWebhook(tx: Tx, row: Insertable<WebhooksTable>): Promise<WebhookRow> {
  return tx.insertInto('webhooks').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A webhook that is not deleted. */
export async function findWebhook(db: Kysely<DB>, id: string): Promise<WebhookRow | undefined> {
  return db.selectFrom('webhooks').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function lockWebhook(tx: Tx, id: string): Promise<WebhookRow | undefined> {
  return tx.selectFrom('webhooks').selectAll().where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Applies changes and bumps the version. */
export async function updateWebhook(tx: Tx, id: string, changes: Updateable<WebhooksTable>): Promise<WebhookRow> {
  return tx
    .updateTable('webhooks')
    .set({ ...changes, version: sql`version + 1` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Turns an enabled webhook off and bumps its version; false when it was already off (nothing changed). */
export async function disableWebhook(tx: Tx, id: string, changes: Omit<Updateable<WebhooksTable>, 'enabled'>): Promise<boolean> {
  const row = await tx
    .updateTable('webhooks')
    .set({ ...changes, enabled: false, version: sql`version + 1` })
    .where('id', '=', id)
    .where('enabled', '=', true)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** One page of live webhooks by id; fetches `limit + 1` for `has_more`. */
export async function listWebhooks(db: Kysely<DB>, q: { afterId: string | undefined; limit: number; createdBy?: string | undefined }): Promise<WebhookRow[]> {
  let query = db.selectFrom('webhooks').selectAll().where('deleted_at', 'is', null);
  if (q.afterId) query = query.where('id', '>', q.afterId);
  if (q.createdBy !== undefined) query = query.where('created_by_id', '=', q.createdBy);
  return query.orderBy('id').limit(q.limit + 1).execute();
}

/** One page of a webhook's deliveries, newest event first; fetches `limit + 1`. */
export async function listDeliveries(db: Kysely<DB>, webhookId: string, q: { beforeSeq: string | undefined; limit: number }): Promise<DeliveryRow[]> {
  let query = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId);
  if (q.beforeSeq) query = query.where('event_seq', '<', q.beforeSeq);
  return query.orderBy('event_seq', 'desc').limit(q.limit + 1).execute();
}

/** The workspaces that have a webhook enabled and not deleted (none: nothing to deliver anywhere), in one statement. */
export async function liveWebhookWorkspaces(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ workspace_id: string }>`SELECT DISTINCT workspace_id FROM webhooks WHERE enabled AND deleted_at IS NULL ORDER BY workspace_id`.execute(db);
  return rows.map((row) => row.workspace_id);
}

/** Enabled webhooks no other instance is fanning out right now. */
export async function lockLiveWebhooks(tx: Tx, limit: number): Promise<WebhookRow[]> {
  return tx
    .selectFrom('webhooks')
    .selectAll()
    .where('enabled', '=', true)
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Settled events strictly after `afterSeq` (see `settledEvents`), optionally of some types only, in commit order. */
export async function eventsAfter(db: Kysely<DB>, afterSeq: string, types: string[] | null, limit: number): Promise<EventRow[]> {
  let query = settledEvents(db).where('seq', '>', afterSeq);
  if (types) query = query.where('type', '=', (eb) => eb.fn.any(eb.val(types)));
  return query.orderBy('events.seq').limit(limit).execute();
}

export interface NewDelivery {
  id: string;
  webhook_id: string;
  event_id: string;
  event_seq: string;
  now: Date;
}

/**
 * Queues deliveries, due now. An event already queued for the webhook is left alone, unless
 * `retryFailed` (a replay) and it failed: then it is due again with a fresh round of attempts.
 * Answers how many were queued.
 */
export async function queueDeliveries(tx: Tx, rows: readonly NewDelivery[], retryFailed: boolean): Promise<number> {
  if (rows.length === 0) return 0;
  const values = rows.map((r) => ({
    id: r.id,
    webhook_id: r.webhook_id,
    event_id: r.event_id,
    event_seq: r.event_seq,
    state: 'pending' as const,
    next_attempt_at: r.now,
    created_at: r.now,
    updated_at: r.now,
  }));
  const result = await tx
    .insertInto('webhook_deliveries')
    .values(values)
    .onConflict((oc) =>
      retryFailed
        ? oc
            .columns(['webhook_id', 'event_id'])
            .doUpdateSet({ state: 'pending', attempt_count: 0, next_attempt_at: sql`excluded.next_attempt_at`, updated_at: sql`excluded.updated_at` })
            .where('webhook_deliveries.state', '=', 'failed')
        : oc.columns(['webhook_id', 'event_id']).doNothing(),
    )
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0);
}

/**
 * Deletes up to `limit` finished deliveries (delivered or failed) whose last attempt was at or
 * before `before`, in every workspace; a pending one stays whatever its age. Answers how many went.
 * SKIP LOCKED: instances pruning at once never wait on or delete the same rows.
 */
export async function pruneDeliveries(db: Kysely<DB>, before: Date, limit: number): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    WITH gone AS (
      DELETE FROM webhook_deliveries WHERE ctid IN (
        SELECT ctid FROM webhook_deliveries WHERE state <> 'pending' AND updated_at <= ${before} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
      RETURNING 1)
    SELECT count(*)::int AS n FROM gone`.execute(db);
  return rows[0]?.n ?? 0;
}

/** Moves each webhook's cursor to its seq, in one statement. */
export async function advanceCursors(tx: Tx, moves: readonly { id: string; seq: string }[]): Promise<void> {
  if (moves.length === 0) return;
  await sql`UPDATE webhooks AS w SET cursor_seq = v.seq
    FROM unnest(${moves.map((m) => m.id)}::text[], ${moves.map((m) => m.seq)}::bigint[]) AS v(id, seq)
    WHERE w.id = v.id`.execute(tx);
}

export interface DueDelivery {
  delivery: DeliveryRow;
  webhook: WebhookRow;
  event: EventRow;
}

/**
 * Takes up to `limit` due deliveries of enabled webhooks and pushes their due time to `claimUntil`,
 * so no other instance takes them while they are in flight (and they come back if this one dies).
 * The `known` webhooks and events (those the caller just read) are not read again.
 */
export async function claimDue(
  db: Kysely<DB>,
  now: Date,
  claimUntil: Date,
  limit: number,
  known: { readonly webhooks: readonly WebhookRow[]; readonly events: readonly EventRow[] } = { webhooks: [], events: [] },
): Promise<DueDelivery[]> {
  const claimed = await db
    .updateTable('webhook_deliveries')
    .set({ next_attempt_at: claimUntil })
    .where('id', 'in', (qb) =>
      qb
        .selectFrom('webhook_deliveries as d')
        .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
        .select('d.id')
        // A literal, not a parameter: a generic plan can then read the partial index of pending
        // deliveries, so PostgreSQL keeps one plan for the statement instead of planning each pass's.
        .where(sql<boolean>`d.state = 'pending'`)
        .where('d.next_attempt_at', '<=', now)
        .where('w.enabled', '=', true)
        .where('w.deleted_at', 'is', null)
        .orderBy('d.next_attempt_at')
        .limit(limit)
        .forUpdate('d')
        .skipLocked(),
    )
    .returningAll()
    .execute();
  if (claimed.length === 0) return [];
  const webhooks = new Map(known.webhooks.map((w) => [w.id, w]));
  const events = new Map(known.events.map((e) => [e.id, e]));
  const webhooksToRead = [...new Set(claimed.map((d) => d.webhook_id))].filter((id) => !webhooks.has(id));
  if (webhooksToRead.length > 0) {
    for (const w of await db.selectFrom('webhooks').selectAll().where('id', '=', (eb) => eb.fn.any(eb.val(webhooksToRead))).execute()) webhooks.set(w.id, w);
  }
  const eventsToRead = claimed.map((d) => d.event_id).filter((id) => !events.has(id));
  if (eventsToRead.length > 0) {
    for (const e of await selectEvents(db).where('id', '=', (eb) => eb.fn.any(eb.val(eventsToRead))).execute()) events.set(e.id, e);
  }
  const archived = claimed.filter((d) => !events.has(d.event_id));
  if (archived.length > 0) {
    // Its event was archived (`baton archive-events`) while the webhook was disabled: nothing left to send.
    const attempt: WebhookAttempt = { at: now.toISOString(), status: null, duration_ms: 0, error: 'event archived' };
    await db
      .updateTable('webhook_deliveries')
      .set({ state: 'failed', attempts: sql`attempts || ${JSON.stringify([attempt])}::jsonb`, updated_at: now })
      .where('id', '=', (eb) => eb.fn.any(eb.val(archived.map((d) => d.id))))
      .execute();
  }
  return claimed.flatMap((delivery) => {
    const webhook = webhooks.get(delivery.webhook_id);
    const event = events.get(delivery.event_id);
    return webhook && event ? [{ delivery, webhook, event }] : [];
  });
}

/** An attempt made at a delivery, and the delivery's state after it. */
export interface AttemptOutcome {
  readonly id: string;
  readonly state: DeliveryRow['state'];
  readonly attempt: WebhookAttempt;
  readonly nextAttemptAt: Date;
}

/** Records each delivery's attempt and new state, all in one statement. */
export async function recordAttempts(tx: Tx, outcomes: readonly AttemptOutcome[], now: Date): Promise<void> {
  if (outcomes.length === 0) return;
  await sql`UPDATE webhook_deliveries AS d
    SET state = v.state, attempt_count = d.attempt_count + 1, attempts = d.attempts || jsonb_build_array(v.attempt),
      next_attempt_at = v.next_attempt_at, updated_at = ${now}
    FROM unnest(${outcomes.map((o) => o.id)}::text[], ${outcomes.map((o) => o.state)}::text[],
      ${outcomes.map((o) => JSON.stringify(o.attempt))}::jsonb[], ${outcomes.map((o) => o.nextAttemptAt.toISOString())}::timestamptz[]) AS v(id, state, attempt, next_attempt_at)
    WHERE d.id = v.id`.execute(tx);
}
