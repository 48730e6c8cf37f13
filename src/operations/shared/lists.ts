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
  .describe('A `sync_cursor` (an event id): only changes after it.');

export const viewParam = z.enum(['compact', 'full']).default('compact').describe('`full`: the whole object.');

/** The longest comma-separated query value: every list filter's items fit many times over. */
export const LIST_PARAM_MAX = 2000;

/** The most items any list filter takes (a filter's own bound may be lower). */
const LIST_ITEMS_MAX = 100;

/**
 * A list filter's items. Over MCP and GraphQL it is an array (`["todo","blocked"]`), as every list
 * there is; over REST, comma-separated text (`?status=todo,blocked`) or the parameter repeated
 * (`?status=todo&status=blocked`). Every interface accepts both forms (an MCP or GraphQL caller of
 * the comma form keeps working): each text item is split at commas and trimmed, blanks dropped. The
 * derived schemas advertise the array (OpenAPI: a comma-separated `form` query parameter). One rule
 * for every list filter: a list with no items (`?status=`, `?status=,,,`, `[]`) is refused naming
 * the parameter, never read as "no filter" nor as "match nothing"; to not filter, leave it out.
 */
export function listFilter<T extends z.ZodType<unknown[]>>(items: T, refuse: (items: unknown[]) => string | undefined = () => undefined) {
  return z.preprocess((value: string | readonly string[], ctx) => {
    if (typeof value === 'string' && value.length > LIST_PARAM_MAX) {
      ctx.addIssue({ code: 'custom', message: `at most ${LIST_PARAM_MAX} characters` });
      return value;
    }
    const parts = typeof value === 'string' ? [value] : Array.isArray(value) ? (value as unknown[]) : undefined;
    if (parts === undefined) return value;
    const split = parts.flatMap((part) => (typeof part === 'string' ? part.split(',').map((s) => s.trim()).filter(Boolean) : [part]));
    // Refused at the list (pointer `/status`, as before arrays), so an issue here stops the items' own checks.
    const refusal =
      split.length === 0 ? 'empty list: give at least one value, or leave the parameter out to not filter' : split.length > LIST_ITEMS_MAX ? `at most ${LIST_ITEMS_MAX} items` : refuse(split);
    if (refusal !== undefined) ctx.addIssue({ code: 'custom', message: refusal });
    return split;
  }, items);
}

/** A list filter of the given names. */
export function namesFilter<const T extends readonly [string, ...string[]]>(names: T, what: string) {
  const unknown = (items: unknown[]) => items.filter((item) => !(names as readonly unknown[]).includes(item));
  // No description: the name and the enum say it, and every tools/list carries it (test/agent/budgets.test.ts).
  return listFilter(z.array(z.enum(names)).max(LIST_ITEMS_MAX), (items) =>
    unknown(items).length > 0 ? `unknown ${what}: ${unknown(items).join(', ')}; allowed: ${names.join(', ')}` : undefined,
  ).optional();
}

/** A page's continuation; one schema object, so OpenAPI names it once (NextCursor). */
export const nextCursorOutput = z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page.');
/** A page's delta cursor; one schema object, so OpenAPI names it once (SyncCursor). */
export const syncCursorOutput = z
  .string()
  .nullable()
  .describe('The newest event id when this page was read; pass it as `since` later to get only what changed.');

/** Every list response: a bounded page, its continuation, and the delta cursor. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    data: z.array(item).max(100),
    has_more: z.boolean(),
    next_cursor: nextCursorOutput,
    sync_cursor: syncCursorOutput,
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
