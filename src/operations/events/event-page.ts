import type { Kysely } from 'kysely';
import { type EventFilter, type EventRow, latestEventId, listEvents, listEventsForSubjects } from '../../store/events.ts';
import type { DB } from '../../store/schema.ts';
import { latestArchive } from '../../store/event-archive.ts';
import type { Cursors } from '../shared/cursors.ts';
import { cursorArchived, paginate, sinceSeq } from '../shared/lists.ts';
import { shapeEvent } from './event-schema.ts';

export interface EventPageInput {
  since?: string | undefined;
  cursor?: string | undefined;
  limit: number;
  order: 'asc' | 'desc';
  types?: string[] | undefined;
  view: 'compact' | 'full';
  fields?: readonly string[] | undefined;
}

/** The sync cursor and the seq bounds `since` and `cursor` set; checks the cursor, then reads the sync cursor first. */
async function eventWindow(db: Kysely<DB>, cursors: Cursors, input: EventPageInput) {
  const position = cursors.decode('events', input.cursor);
  const syncCursor = await latestEventId(db);
  let afterSeq: string | undefined;
  let beforeSeq: string | undefined;
  if (input.since) afterSeq = await sinceSeq(db, input.since);
  if (position !== undefined) {
    if (input.order === 'asc') afterSeq = await forwardPosition(db, input.cursor ?? '', position);
    else beforeSeq = position;
  }
  return { syncCursor, query: { types: input.types, afterSeq, beforeSeq, order: input.order, limit: input.limit } };
}

/** An ascending page's cursor, unless events after it were archived since it was issued (410: the next page would skip them). */
async function forwardPosition(db: Kysely<DB>, cursor: string, position: string): Promise<string> {
  const archive = await latestArchive(db);
  if (archive && BigInt(position) < BigInt(archive.throughSeq)) throw await cursorArchived(db, `cursor ${cursor}`, archive);
  return position;
}

function toPage(rows: EventRow[], input: EventPageInput, at: { cursors: Cursors; syncCursor: string | null }) {
  const page = paginate(rows, input.limit, (row) => at.cursors.encode('events', String(row.seq)));
  return {
    data: page.rows.map((row) => shapeEvent(row, input)),
    has_more: page.has_more,
    next_cursor: page.next_cursor,
    sync_cursor: at.syncCursor,
  };
}

/** One page of the timeline (whole, or one subject's or actor's), in commit order. */
export async function eventPage(db: Kysely<DB>, cursors: Cursors, filter: EventFilter, input: EventPageInput) {
  const { syncCursor, query } = await eventWindow(db, cursors, input);
  return toPage(await listEvents(db, { ...filter, ...query }), input, { cursors, syncCursor });
}

/** The same page for each subject, in a fixed number of queries however many subjects; in `subjects` order. */
export async function eventPages(db: Kysely<DB>, cursors: Cursors, input: EventPageInput & { subjects: readonly string[] }) {
  const { syncCursor, query } = await eventWindow(db, cursors, input);
  const rows = await listEventsForSubjects(db, input.subjects, query);
  return input.subjects.map((subject) => toPage(rows.get(subject) ?? [], input, { cursors, syncCursor }));
}
