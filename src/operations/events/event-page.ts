import type { Kysely } from 'kysely';
import { eventSeq, latestEventId, listEvents } from '../../store/events.ts';
import type { DB } from '../../store/schema.ts';
import { decodeCursor, paginate, unknownEvent } from '../shared/lists.ts';
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

/** One page of the timeline (whole, or one subject's), in commit order; shared by both event lists. */
export async function eventPage(db: Kysely<DB>, subject: string | undefined, input: EventPageInput) {
  const syncCursor = await latestEventId(db);
  let afterSeq: string | undefined;
  let beforeSeq: string | undefined;
  if (input.since) {
    afterSeq = await eventSeq(db, input.since);
    if (afterSeq === undefined) throw unknownEvent(input.since);
  }
  const position = decodeCursor('events', input.cursor);
  if (position !== undefined) {
    if (input.order === 'asc') afterSeq = position;
    else beforeSeq = position;
  }
  const rows = await listEvents(db, { subject, types: input.types, afterSeq, beforeSeq, order: input.order, limit: input.limit });
  const page = paginate(rows, input.limit, 'events', (row) => String(row.seq));
  return {
    data: page.rows.map((row) => shapeEvent(row, input)),
    has_more: page.has_more,
    next_cursor: page.next_cursor,
    sync_cursor: syncCursor,
  };
}
