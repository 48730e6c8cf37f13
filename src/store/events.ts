import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql, type Selectable } from 'kysely';
import type { DB, EventsTable } from './schema.ts';
import { sendStatement, type Tx } from './connection.ts';

export type EventRow = Selectable<EventsTable>;

export interface NewEventRow {
  id: string;
  type: string;
  subject: string;
  actor_id: string;
  actor_kind: string;
  token_id: string | null;
  machine: string | null;
  idempotency_key: string | null;
  approval_id?: string | null;
  data: unknown;
  created_at: Date;
}

/** The NOTIFY channel that wakes streams and the webhook worker on every instance after an append commits. */
export const EVENTS_CHANNEL = 'baton_events';

/** Seqs per transaction: an event's seq is its transaction's id times this, plus its ordinal. */
const PER_TRANSACTION = 1048576;

/**
 * The first seq a transaction still in progress could write: every event below it is committed
 * (or never will be). Cursor reads stay below it, so nothing can appear behind a cursor.
 */
export const SETTLED = sql<string>`(pg_snapshot_xmin(pg_current_snapshot())::text::bigint * ${sql.lit(PER_TRANSACTION)})`;

/**
 * Appends events, with no lock: an event's seq is its writing transaction's id (`xid8`) times
 * 2^20 plus its ordinal within that transaction (migration 0030), so seq order is transaction-id
 * order, and writers to different tasks commit concurrently. Commit order is recovered on reading:
 * a reader that moves a cursor reads only below `SETTLED` (the oldest transaction still in
 * progress, anywhere on the server), where every writer has ended, so a reader that has passed seq
 * N will never later find a smaller one appear. That is what makes `since` cursors and the stream
 * gap-free. It also queues a NOTIFY on `EVENTS_CHANNEL`, delivered at commit (nothing if the write
 * rolls back). One transaction appends fewer than 2^20 events.
 */
export async function appendEvents(tx: Tx, events: readonly NewEventRow[]): Promise<void> {
  if (events.length === 0) return;
  await sendStatement(tx, APPEND_EVENTS, appendParameters(events));
}

/**
 * The same append as common table expressions (`wake`, `mine`, `appended`), for a write's
 * last statement to carry along, saving a round trip: `WITH ${APPENDING}, … `. It takes the
 * statement's first two parameters, `appendParameters(events)`.
 */
export const APPENDING = `wake AS (SELECT pg_notify($1, '')), mine AS (
    -- This transaction's seq range starts at its id times 2^20; earlier appends of it sit at its bottom.
    SELECT x.base + (SELECT count(*) FROM events WHERE seq >= x.base AND seq < x.base + ${PER_TRANSACTION}) AS next
    FROM (SELECT pg_current_xact_id()::text::bigint * ${PER_TRANSACTION} AS base) AS x), appended AS (
    INSERT INTO events (seq, id, type, subject, actor_id, actor_kind, token_id, machine, idempotency_key, approval_id, data, created_at)
    SELECT mine.next + e.ord - 1, e.id, e.type, e.subject, e.actor_id, e.actor_kind, e.token_id, e.machine, e.idempotency_key, e.approval_id, e.data, e.created_at
    FROM wake, mine, ROWS FROM (jsonb_to_recordset($2::jsonb) AS (
      id text, type text, subject text, actor_id text, actor_kind text, token_id text, machine text,
      idempotency_key text, approval_id text, data jsonb, created_at timestamptz)) WITH ORDINALITY AS e(
      id, type, subject, actor_id, actor_kind, token_id, machine, idempotency_key, approval_id, data, created_at, ord))`;

const APPEND_EVENTS = `WITH ${APPENDING} SELECT 1`;

/** `APPENDING`'s parameters: the channel to wake, and the rows as one JSON array. */
export function appendParameters(events: readonly NewEventRow[]): [string, string] {
  const rows = events.map((e) => ({
    id: e.id,
    type: e.type,
    subject: e.subject,
    actor_id: e.actor_id,
    actor_kind: e.actor_kind,
    token_id: e.token_id,
    machine: e.machine,
    idempotency_key: e.idempotency_key,
    approval_id: e.approval_id ?? null,
    data: e.data,
    created_at: e.created_at.toISOString(),
  }));
  return [EVENTS_CHANNEL, JSON.stringify(rows)];
}

/** The sequence number of an event id, or undefined if no such event exists. */
export async function eventSeq(db: Kysely<DB>, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('events').select(sql<string>`seq::text`.as('seq')).where('id', '=', id).executeTakeFirst();
  return row?.seq;
}

/** The newest settled event id at read time (a cursor: nothing can commit behind it), or null on an empty timeline. */
export async function latestEventId(db: Kysely<DB>): Promise<string | null> {
  const row = await db.selectFrom('events').select('id').where(sql<boolean>`seq < ${SETTLED}`).orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row?.id ?? null;
}

/** The newest settled sequence number (a cursor: nothing can commit behind it), or '0' on an empty timeline. */
export async function latestSeq(db: Kysely<DB>): Promise<string> {
  const row = await db.selectFrom('events').select(sql<string>`coalesce(max(seq), 0)::text`.as('seq')).where(sql<boolean>`seq < ${SETTLED}`).executeTakeFirstOrThrow();
  return row.seq;
}

/** Every column of an event row, `seq` as text; the base of every event read. */
export function selectEvents(db: Kysely<DB>) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'subject', 'actor_id', 'actor_kind', 'token_id', 'machine', 'idempotency_key', 'approval_id', 'data', 'created_at'])
    .select(sql<string>`seq::text`.as('seq'))
    .select('workspace_id');
}

/** `selectEvents` below `SETTLED`: the events a cursor may pass, since none can commit behind them. */
export function settledEvents(db: Kysely<DB>) {
  return selectEvents(db).where(sql<boolean>`seq < ${SETTLED}`);
}

/** Which events a list keeps, besides their types: those about one subject, by one actor, by one kind of actor. */
export interface EventFilter {
  subject?: string | undefined;
  actorId?: string | undefined;
  actorKind?: string | undefined;
}

export interface EventListQuery extends EventFilter {
  types: string[] | undefined;
  afterSeq: string | undefined;
  beforeSeq: string | undefined;
  order: 'asc' | 'desc';
  limit: number;
}

/** Re-reads of a page that came back short while settled-to-be events waited behind a transaction still running. */
const HELD_RETRIES = 100;
/** The pause before each re-read. */
const HELD_RETRY_MS = 2;

/**
 * One page of the timeline in commit order. Fetches `limit + 1` rows for `has_more`. A read that
 * can hand out a cursor (the whole timeline, or any `afterSeq`) stays below `SETTLED`; when that
 * hides events already committed, it re-reads a few milliseconds later (at most `HELD_RETRIES`
 * times), so a writer sees its own event promptly unless a transaction stays open. Call it on
 * the database, not inside a transaction that writes (its own id would hold the page back).
 */
export async function listEvents(db: Kysely<DB>, q: EventListQuery): Promise<EventRow[]> {
  const settled = q.subject === undefined || q.afterSeq !== undefined;
  let query = selectEvents(db);
  if (q.subject) query = query.where('subject', '=', q.subject);
  if (q.actorId) query = query.where('actor_id', '=', q.actorId);
  if (q.actorKind) query = query.where('actor_kind', '=', q.actorKind);
  if (q.types) query = query.where('type', '=', (eb) => eb.fn.any(eb.val(q.types)));
  if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
  if (q.beforeSeq !== undefined) query = query.where('seq', '<', q.beforeSeq);
  if (settled) query = query.where(sql<boolean>`seq < ${SETTLED}`);
  const page = query.orderBy('events.seq', q.order).limit(q.limit + 1);
  for (let attempt = 0; ; attempt++) {
    const rows = await page.execute();
    if (!settled || rows.length > q.limit || attempt >= HELD_RETRIES || !(await eventsHeldBack(db, q.afterSeq))) return rows;
    // Waits here, not in the database (`pg_sleep`), so the pause holds no pooled connection.
    await sleep(HELD_RETRY_MS);
  }
}

/** Whether committed events (after `afterSeq`, if given) wait above `SETTLED` for an older transaction to end. */
export async function eventsHeldBack(db: Kysely<DB>, afterSeq?: string): Promise<boolean> {
  let query = db.selectFrom('events').select('seq').where(sql<boolean>`seq >= ${SETTLED}`);
  if (afterSeq !== undefined) query = query.where('seq', '>', afterSeq);
  // In seq order, so it is one probe of the seq index: unordered, a generic plan (or a table not yet
  // analyzed) scans the whole timeline, 6 ms at 30,000 events, for a check a stream makes every read.
  return (await query.orderBy('seq').limit(1).executeTakeFirst()) !== undefined;
}

/**
 * The same page for each of many subjects, in one statement: a LATERAL subquery per subject reads
 * its own `limit + 1` rows off the (subject, seq) index. Rows come grouped by subject.
 */
export async function listEventsForSubjects(db: Kysely<DB>, subjects: readonly string[], q: Omit<EventListQuery, keyof EventFilter>): Promise<Map<string, EventRow[]>> {
  const bySubject = new Map<string, EventRow[]>(subjects.map((s) => [s, []]));
  if (subjects.length === 0) return bySubject;
  const { rows } = await sql<EventRow>`
    SELECT e.id, e.type, e.subject, e.actor_id, e.actor_kind, e.token_id, e.machine, e.idempotency_key, e.approval_id, e.data, e.created_at, e.seq::text AS seq
    FROM unnest(${[...subjects]}::text[]) WITH ORDINALITY AS s(subject, ord)
    CROSS JOIN LATERAL (
      SELECT * FROM events
      WHERE events.subject = s.subject
        ${q.types ? sql`AND events.type = ANY(${q.types}::text[])` : sql``}
        ${q.afterSeq !== undefined ? sql`AND events.seq > ${q.afterSeq} AND events.seq < ${SETTLED}` : sql``}
        ${q.beforeSeq !== undefined ? sql`AND events.seq < ${q.beforeSeq}` : sql``}
      ORDER BY events.seq ${q.order === 'asc' ? sql`ASC` : sql`DESC`}
      LIMIT ${q.limit + 1}
    ) AS e
    ORDER BY s.ord, e.seq ${q.order === 'asc' ? sql`ASC` : sql`DESC`}
  `.execute(db);
  for (const row of rows) bySubject.get(row.subject)?.push(row);
  return bySubject;
}

export interface EventWindowQuery {
  /** Events created in [from, to). */
  from: Date;
  to: Date;
  afterSeq: string | undefined;
  /** The newest seq to read: a settled seq taken when the export began (`latestSeq`), the same on every page. */
  throughSeq: string;
  limit: number;
}

/**
 * Events created in a window, in commit order, up to `throughSeq`; one more than `limit`. Every
 * event at or below a settled seq has committed, so a reader paging up to the same `throughSeq`
 * never finds an event appear behind its cursor: the pages together are the window as it stood
 * when the first was read.
 */
export async function listEventsInWindow(db: Kysely<DB>, q: EventWindowQuery): Promise<EventRow[]> {
  let query = selectEvents(db).where('created_at', '>=', q.from).where('created_at', '<', q.to).where('seq', '<=', q.throughSeq);
  if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
  return query.orderBy('events.seq').limit(q.limit + 1).execute();
}
