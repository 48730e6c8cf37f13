import type { Kysely } from 'kysely';
import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { type ArchivedRange, latestArchive, oldestEventId } from '../../store/event-archive.ts';
import { eventSeq } from '../../store/events.ts';
import type { DB } from '../../store/schema.ts';

/** `limit`: default 25, 1–100 (the spec's bounds); out of range is a 400 naming the bound. */
export const limitParam = z.coerce
  .number()
  .int()
  .min(1, 'limit must be at least 1')
  .max(100, 'limit must be at most 100 (pages are bounded; follow next_cursor for more)')
  .default(25);

/** No description: a page's `next_cursor` says to pass it as `cursor`, and every tool listing spends what this would repeat. */
export const cursorParam = z.string().min(1).max(512).optional();

export const sinceParam = z
  .string()
  .regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/, 'since must be an event id (evt_…), e.g. the sync_cursor of your last read')
  .optional()
  .describe('An event id (a `sync_cursor`): only what changed after it.');

export const viewParam = z.enum(['compact', 'full']).default('compact').describe('`full`: the whole object.');

/** The longest comma-separated query value: every list filter's items fit many times over. */
export const LIST_PARAM_MAX = 2000;

/**
 * A comma-separated query value as its items, trimmed. One rule for every list filter: a value with
 * no items (`?status=`, `?status=,,,`) is refused with a 400 naming the parameter, never read as
 * "no filter" nor as "match nothing"; to not filter, omit the parameter.
 */
export const commaSeparated = z.string().max(LIST_PARAM_MAX, `at most ${LIST_PARAM_MAX} characters`).transform((value, ctx) => {
  const items = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (items.length === 0) {
    ctx.addIssue({ code: 'custom', message: 'empty list: give at least one comma-separated value, or omit the parameter to not filter' });
    return z.NEVER;
  }
  return items;
});

/** A comma-separated list of the given names, as a query parameter. */
export function commaList<const T extends readonly [string, ...string[]]>(names: T, what: string) {
  return commaSeparated
    .transform((items, ctx) => {
      const unknown = items.filter((item) => !names.includes(item));
      if (unknown.length > 0) {
        ctx.addIssue({ code: 'custom', message: `unknown ${what}: ${unknown.join(', ')}; allowed: ${names.join(', ')}` });
        return z.NEVER;
      }
      return items;
    })
    .optional()
    .describe(`Comma-separated ${what}, any of: ${names.join(', ')}.`);
}

/** Every list response: a bounded page, its continuation, and the delta cursor. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item).max(100),
    has_more: z.boolean(),
    next_cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.'),
    sync_cursor: z
      .string()
      .nullable()
      .describe('The newest event id when this page was read; pass it as `since` later to get only what changed.'),
  });
}

/** Splits a `limit + 1` fetch into the page and its continuation, `cursorAfter` its last row (`Cursors.encode`). */
export function paginate<T>(rows: T[], limit: number, cursorAfter: (row: T) => string): { rows: T[]; has_more: boolean; next_cursor: string | null } {
  const hasMore = rows.length > limit;
  const page = hasMore ? rows.slice(0, limit) : rows;
  const last = page.at(-1);
  return { rows: page, has_more: hasMore, next_cursor: hasMore && last ? cursorAfter(last) : null };
}

/** Keeps only the chosen fields (and always `id`), in the object's own order. */
/**
 * `full` cut to `core` (always kept, so the served schema can mark them required) plus `fields`,
 * in `full`'s key order.
 */
export function project<T extends { id: string }, K extends keyof T>(full: T, fields: readonly string[], core: readonly K[]): Partial<T> & Pick<T, K> {
  const keep = new Set<string>([...(core as readonly string[]), ...fields]);
  const kept: Record<string, unknown> = {};
  for (const key in full) if (keep.has(key)) kept[key] = full[key];
  return kept as Partial<T> & Pick<T, K>;
}

/**
 * The seq of a `since` cursor. An event id that is not in the table is either archived (at or below
 * the newest archived id: 410 `cursor_archived`, naming the oldest cursor still served) or was
 * never issued (400).
 */
export async function sinceSeq(db: Kysely<DB>, since: string): Promise<string> {
  const seq = await eventSeq(db, since);
  if (seq !== undefined) return seq;
  const archive = await latestArchive(db);
  if (archive && since <= archive.maxId) throw await cursorArchived(db, since, archive);
  throw unknownEvent(since);
}

/** 410 for a cursor into the archived part of the timeline (`baton archive-events`), naming the oldest cursor still served. */
export async function cursorArchived(db: Kysely<DB>, cursor: string, archive: ArchivedRange): Promise<BatonError> {
  return new BatonError('cursor_archived', `${cursor} is older than the events this server still keeps: they were archived on ${archive.archivedAt.toISOString()}.`, {
    extra: { oldest_cursor: await oldestEventId(db), archived_at: archive.archivedAt.toISOString() },
  });
}

function unknownEvent(since: string): BatonError {
  return new BatonError('invalid_parameter', `since=${since} names no event.`, {
    hint: 'Pass an event id you received (a sync_cursor or an event id), or omit since for the whole list.',
    extra: { errors: [{ pointer: '/since', detail: 'no such event', location: 'query' }] },
  });
}
