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

/**
 * Appends events. Takes the event-append lock first and holds it to commit, so `seq` follows
 * commit order: a reader that has seen seq N will never later find a smaller one appear. That is
 * what makes `since` cursors and the stream gap-free. Call it as the last statement of a write.
 * It also queues a NOTIFY on `EVENTS_CHANNEL`, delivered at commit (nothing if the write rolls back).
 */
export async function appendEvents(tx: Tx, events: readonly NewEventRow[]): Promise<void> {
  if (events.length === 0) return;
  await sendStatement(tx, APPEND_EVENTS, appendParameters(events));
}

/**
 * The same append as common table expressions (`append_lock`, `wake`, `appended`), for a write's
 * last statement to carry along, saving a round trip: `WITH ${APPENDING}, … `. It takes the
 * statement's first two parameters, `appendParameters(events)`.
 */
export const APPENDING = `append_lock AS (SELECT pg_advisory_xact_lock(1, 1)), wake AS (SELECT pg_notify($1, '')), appended AS (
    INSERT INTO events (id, type, subject, actor_id, actor_kind, token_id, machine, idempotency_key, approval_id, data, created_at)
    SELECT e.id, e.type, e.subject, e.actor_id, e.actor_kind, e.token_id, e.machine, e.idempotency_key, e.approval_id, e.data, e.created_at
    FROM append_lock, wake, jsonb_to_recordset($2::jsonb) AS e(
      id text, type text, subject text, actor_id text, actor_kind text, token_id text, machine text,
      idempotency_key text, approval_id text, data jsonb, created_at timestamptz))`;

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

/** The newest event id at read time, or null on an empty timeline. */
export async function latestEventId(db: Kysely<DB>): Promise<string | null> {
  const row = await db.selectFrom('events').select('id').orderBy('seq', 'desc').limit(1).executeTakeFirst();
  return row?.id ?? null;
}

/** The newest sequence number, or '0' on an empty timeline. */
export async function latestSeq(db: Kysely<DB>): Promise<string> {
  const row = await db.selectFrom('events').select(sql<string>`coalesce(max(seq), 0)::text`.as('seq')).executeTakeFirstOrThrow();
  return row.seq;
}

/** Every column of an event row, `seq` as text; the base of every event read. */
export function selectEvents(db: Kysely<DB>) {
  return db
    .selectFrom('events')
    .select(['id', 'type', 'subject', 'actor_id', 'actor_kind', 'token_id', 'machine', 'idempotency_key', 'approval_id', 'data', 'created_at'])
    .select(sql<string>`seq::text`.as('seq'));
}

export interface EventListQuery {
  subject: string | undefined;
  types: string[] | undefined;
  afterSeq: string | undefined;
  beforeSeq: string | undefined;
  order: 'asc' | 'desc';
  limit: number;
}

/** One page of the timeline in commit order. Fetches `limit + 1` rows for `has_more`. */
export async function listEvents(db: Kysely<DB>, q: EventListQuery): Promise<EventRow[]> {
  let query = selectEvents(db);
  if (q.subject) query = query.where('subject', '=', q.subject);
  if (q.types) query = query.where('type', '=', (eb) => eb.fn.any(eb.val(q.types)));
  if (q.afterSeq !== undefined) query = query.where('seq', '>', q.afterSeq);
  if (q.beforeSeq !== undefined) query = query.where('seq', '<', q.beforeSeq);
  return query.orderBy('events.seq', q.order).limit(q.limit + 1).execute();
}

/**
 * The same page for each of many subjects, in one statement: a LATERAL subquery per subject reads
 * its own `limit + 1` rows off the (subject, seq) index. Rows come grouped by subject.
 */
export async function listEventsForSubjects(db: Kysely<DB>, subjects: readonly string[], q: Omit<EventListQuery, 'subject'>): Promise<Map<string, EventRow[]>> {
  const bySubject = new Map<string, EventRow[]>(subjects.map((s) => [s, []]));
  if (subjects.length === 0) return bySubject;
  const { rows } = await sql<EventRow>`
    SELECT e.id, e.type, e.subject, e.actor_id, e.actor_kind, e.token_id, e.machine, e.idempotency_key, e.approval_id, e.data, e.created_at, e.seq::text AS seq
    FROM unnest(${[...subjects]}::text[]) WITH ORDINALITY AS s(subject, ord)
    CROSS JOIN LATERAL (
      SELECT * FROM events
      WHERE events.subject = s.subject
        ${q.types ? sql`AND events.type = ANY(${q.types}::text[])` : sql``}
        ${q.afterSeq !== undefined ? sql`AND events.seq > ${q.afterSeq}` : sql``}
        ${q.beforeSeq !== undefined ? sql`AND events.seq < ${q.beforeSeq}` : sql``}
      ORDER BY events.seq ${q.order === 'asc' ? sql`ASC` : sql`DESC`}
      LIMIT ${q.limit + 1}
    ) AS e
    ORDER BY s.ord, e.seq ${q.order === 'asc' ? sql`ASC` : sql`DESC`}
  `.execute(db);
  for (const row of rows) bySubject.get(row.subject)?.push(row);
  return bySubject;
}
