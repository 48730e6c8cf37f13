import { type Kysely, sql } from 'kysely';
import type { DB } from './schema.ts';
import { type EventRow, SETTLED, selectEvents } from './events.ts';
import { inWorkspace } from './workspace-scope.ts';

/** Why an archiving run stopped before the cutoff, if it did. */
export type ArchiveStop =
  | { reason: 'cutoff' }
  | { reason: 'webhook_cursor'; webhook_id: string }
  | { reason: 'pending_delivery'; webhook_id: string }
  | { reason: 'in_progress' }
  | { reason: 'busy' };

export interface ArchivedBatch {
  /** The events deleted, in commit (seq) order; empty when nothing more may go. */
  rows: EventRow[];
  /** Set when the batch ended short of `limit` for a reason other than an empty table. */
  stop: ArchiveStop | null;
}

export interface ArchivedRange {
  /** Every event with seq at or below this is archived. */
  throughSeq: string;
  /** The greatest archived event id: a `since` at or below it names an archived event. */
  maxId: string;
  archivedAt: Date;
}

/** Two runs on one workspace (the retention worker of two instances, or it and `baton archive-events`) take turns. */
const ARCHIVE_LOCK = 0x62617263; // 'barc'

/**
 * Deletes a workspace's oldest events, up to `limit`, that were created before `before` and that
 * nothing still needs, handing them to `keep` before the delete commits: if `keep` throws (the
 * archive file could not be written), the transaction rolls back and no event is lost. The run is
 * recorded in the workspace's `event_archives` in the same transaction. The transaction is bound to
 * the workspace, so every read and the delete see its events only: each workspace's timeline loses
 * a prefix of its own, and another's cursors never meet the gap. While another run on the same
 * workspace holds its turn, nothing is taken (`busy`).
 *
 * An event must stay while an enabled webhook has not fanned it out (`cursor_seq`) or has a
 * delivery of it pending, and while a transaction still in progress could commit an event before it
 * (`SETTLED`). A disabled webhook holds nothing: enabling it starts it from the newest event, and a
 * delivery of an archived event fails ("event archived"). Live webhook rows are share-locked
 * first, so a concurrent replay either finishes first (and its pending deliveries hold the range
 * back) or runs after and finds the events gone. Archiving takes
 * a prefix of the timeline in commit order and stops at the first event created at or after
 * `before`, so "everything at or below `through_seq`" stays true.
 */
export async function archiveBatch(
  db: Kysely<DB>,
  args: { workspaceId: string; before: Date; limit: number; now: Date; file: string },
  keep: (rows: EventRow[]) => Promise<void>,
): Promise<ArchivedBatch> {
  return inWorkspace(db, args.workspaceId, async (tx) => {
    const turn = await sql<{ ok: boolean }>`SELECT pg_try_advisory_xact_lock(${sql.lit(ARCHIVE_LOCK)}, hashtext(${args.workspaceId})) AS ok`.execute(tx);
    if (!turn.rows[0]?.ok) return { rows: [], stop: { reason: 'busy' } };
    await sql`SELECT set_config('baton.archiving', 'on', true)`.execute(tx);
    await liveWebhooks(tx).select('id').orderBy('id').forShare().execute();
    const cursor = await liveWebhooks(tx).select(['id', sql<string>`(cursor_seq + 1)::text`.as('bound')]).orderBy('cursor_seq').limit(1).executeTakeFirst();
    const pending = await tx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhooks as w', 'w.id', 'd.webhook_id')
      .select(['d.webhook_id as id', sql<string>`d.event_seq::text`.as('bound')])
      .where('d.state', '=', 'pending')
      .where('w.enabled', '=', true)
      .where('w.deleted_at', 'is', null)
      .orderBy('d.event_seq')
      .limit(1)
      .executeTakeFirst();

    const candidates = await selectEvents(tx)
      .where(sql<boolean>`seq < ${SETTLED}`)
      .$if(cursor !== undefined, (q) => q.where('seq', '<', cursor?.bound ?? '0'))
      .$if(pending !== undefined, (q) => q.where('seq', '<', pending?.bound ?? '0'))
      .orderBy('events.seq')
      .limit(args.limit + 1)
      .execute();

    const cut = candidates.findIndex((e) => e.created_at >= args.before);
    const taken = candidates.slice(0, cut === -1 ? Math.min(candidates.length, args.limit) : Math.min(cut, args.limit));
    const stop = taken.length < args.limit ? await whyShort(tx, cut !== -1, taken.at(-1)?.seq, cursor, pending) : null;
    if (taken.length === 0) return { rows: [], stop };

    const first = taken[0]!.seq;
    const last = taken.at(-1)!.seq;
    const deleted = await tx.deleteFrom('events').where('seq', '>=', first).where('seq', '<=', last).executeTakeFirst();
    if (Number(deleted.numDeletedRows) !== taken.length) throw new Error(`archiving expected to delete ${taken.length} events, deleted ${deleted.numDeletedRows}`);

    await keep(taken);

    const previous = await tx.selectFrom('event_archives').select('max_id').orderBy('id', 'desc').limit(1).executeTakeFirst();
    const newest = taken.reduce((max, e) => (e.id > max ? e.id : max), previous?.max_id ?? '');
    await tx
      .insertInto('event_archives')
      .values({ through_seq: last, max_id: newest, event_count: String(taken.length), before: args.before, archived_at: args.now, file: args.file })
      .execute();
    return { rows: taken, stop };
  });
}

/** Enabled webhooks that are not deleted: the ones whose progress archiving waits for. */
function liveWebhooks(tx: Kysely<DB>) {
  return tx.selectFrom('webhooks').where('enabled', '=', true).where('deleted_at', 'is', null);
}

/** Names what held a short batch back: the cutoff, a webhook, a pending delivery or a transaction still running. */
async function whyShort(
  tx: Kysely<DB>,
  reachedCutoff: boolean,
  lastSeq: string | undefined,
  cursor: { id: string; bound: string } | undefined,
  pending: { id: string; bound: string } | undefined,
): Promise<ArchiveStop | null> {
  if (reachedCutoff) return { reason: 'cutoff' };
  const next = await tx
    .selectFrom('events')
    .select(sql<string>`seq::text`.as('seq'))
    .$if(lastSeq !== undefined, (q) => q.where('seq', '>', lastSeq ?? '0'))
    .orderBy('events.seq')
    .limit(1)
    .executeTakeFirst();
  if (!next) return null;
  const blocks = (bound: string | undefined) => bound !== undefined && BigInt(next.seq) >= BigInt(bound);
  if (pending && blocks(pending.bound) && (!cursor || BigInt(pending.bound) <= BigInt(cursor.bound))) return { reason: 'pending_delivery', webhook_id: pending.id };
  if (cursor && blocks(cursor.bound)) return { reason: 'webhook_cursor', webhook_id: cursor.id };
  return { reason: 'in_progress' };
}

/** The newest archiving run of the transaction's workspace, or undefined if nothing was ever archived: one read of a small table. */
export async function latestArchive(db: Kysely<DB>): Promise<ArchivedRange | undefined> {
  const latest = await db
    .selectFrom('event_archives')
    .select([sql<string>`through_seq::text`.as('through_seq'), 'max_id', 'archived_at'])
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return latest && { throughSeq: latest.through_seq, maxId: latest.max_id, archivedAt: latest.archived_at };
}

/** The transaction's workspace's oldest event still in the table (its oldest valid `since`), or null if none is. */
export async function oldestEventId(db: Kysely<DB>): Promise<string | null> {
  const oldest = await db.selectFrom('events').select('id').orderBy('seq').limit(1).executeTakeFirst();
  return oldest?.id ?? null;
}
