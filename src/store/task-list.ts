import { type Kysely, sql } from 'kysely';
import { trailingWord } from '../domain/search-typing.ts';
import type { DB } from './schema.ts';
import { ID_LENGTH, listTaskColumns, type ListTaskRow, taskColumns, type TaskRow } from './tasks.ts';

export interface TaskListQuery<C extends 'full' | 'list' = 'full' | 'list'> {
  /** `full`: whole rows (`TaskRow`); `list`: only what a list item's default view shows (`ListTaskRow`). */
  columns: C;
  statuses: string[] | undefined;
  labels: string[] | undefined;
  /** A principal id: only tasks assigned to it; null: only unassigned tasks. */
  assignee?: string | null | undefined;
  /** Only tasks the server took out of the queue for this reason (the dead-letter view). */
  blockedReason?: 'attempts_exhausted' | undefined;
  /** A task id: only its children; null: only top-level tasks. */
  parent?: string | null | undefined;
  /** Only tasks whose id starts with this (`tsk_` and part of a ULID). */
  idPrefix?: string | undefined;
  /** `hide` archived tasks, list `only` them, or `any`: both. */
  archived: 'hide' | 'only' | 'any';
  /** Only tasks with an event after this sequence number (the `since` delta). */
  changedAfterSeq: string | undefined;
  /** Keyset position: ids strictly below this one (newest first). */
  beforeId: string | undefined;
  limit: number;
}

/** A search: the web-search-style text, and the keyset position (rank as text, id) of the last row seen. */
export interface TaskSearch {
  q: string;
  after: { rank: string; id: string } | undefined;
}

/** A row of a list page: whole or as the default view reads it, and a search's rank. */
export type ListedTask<C extends 'full' | 'list'> = (C extends 'full' ? TaskRow : ListTaskRow) & { search_rank?: string };

/**
 * One page of tasks, newest first; with `search`, best match first (rank descending, then id
 * descending). Fetches `limit + 1` rows so the caller can tell `has_more`. A search row carries
 * `search_rank`, its rank as text (exact: float4's text form round-trips), for the cursor.
 */
export async function listTasks<C extends 'full' | 'list'>(db: Kysely<DB>, q: TaskListQuery<C>, search?: TaskSearch): Promise<ListedTask<C>[]> {
  const columns = q.columns === 'list' ? listTaskColumns : taskColumns;
  let query = db.selectFrom('tasks');
  // A delta (since) includes tombstones, so a client learns of deletions; a plain list does not.
  if (q.changedAfterSeq === undefined) query = query.where('deleted_at', 'is', null);
  // One status is an equality, so the page is read in order off tasks_status_id and stops after
  // `limit` rows; `= ANY` of a list makes the planner fetch every task of the status and sort them.
  const statuses = q.statuses;
  if (statuses?.length === 1) query = query.where('status', '=', statuses[0] ?? '');
  else if (statuses) query = query.where('status', '=', (eb) => eb.fn.any(eb.val(statuses)));
  if (q.labels) query = query.where('labels', '@>', sql<string[]>`${q.labels}::text[]`);
  if (q.assignee === null) query = query.where('assignee_id', 'is', null);
  else if (q.assignee !== undefined) query = query.where('assignee_id', '=', q.assignee);
  if (q.blockedReason !== undefined) query = query.where('blocked_reason', '=', q.blockedReason);
  if (q.archived === 'hide') query = query.where('archived_at', 'is', null);
  else if (q.archived === 'only') query = query.where('archived_at', 'is not', null);
  if (q.parent === null) query = query.where('parent_id', 'is', null);
  else if (q.parent !== undefined) query = query.where('parent_id', '=', q.parent);
  if (q.idPrefix !== undefined) {
    // Ids are fixed-length ULIDs: the prefix padded with the lowest and highest ULID characters
    // bounds a range of the primary key, read off its index; LIKE alone would scan every task.
    const pad = ID_LENGTH - q.idPrefix.length;
    query = query.where('id', '>=', q.idPrefix + '0'.repeat(pad)).where('id', '<=', q.idPrefix + 'Z'.repeat(pad));
  }
  if (q.changedAfterSeq !== undefined) {
    const seq = q.changedAfterSeq;
    const changed = await subjectsChangedAfter(db, seq);
    // A short delta is read from its events (a range of events_seq_key), so it costs what changed
    // however many tasks there are; a long one walks the tasks, which then mostly match.
    if (changed) query = query.where('tasks.id', '=', (eb) => eb.fn.any(eb.val(changed)));
    else query = query.where((eb) => eb.exists(eb.selectFrom('events').select(sql`1`.as('one')).whereRef('events.subject', '=', 'tasks.id').where('events.seq', '>', seq)));
  }
  if (search === undefined) {
    if (q.beforeId) query = query.where('id', '<', q.beforeId);
    // The select list's subqueries run only for the rows the filters keep (EXPLAIN: loops = a page), not for those they pass over.
    return query.select(columns).orderBy('tasks.id', 'desc').limit(q.limit + 1).execute();
  }
  const terms = searchTerms(search.q);
  // Every match with its rank, from one pass over each GIN index: a task's own document
  // (task_search, migrations/0070_task_search.sql) weighs in full, its best-matching comment at half
  // weight. A task found only through a comment still has its own document's (partial) rank added,
  // read by key for that task alone.
  const matches = sql<{ task_id: string; rank: number }>`(
    SELECT COALESCE(own.task_id, commented.task_id) AS task_id,
      (COALESCE(own.rank, (SELECT ts_rank(d.search_doc, ${terms}) FROM task_search d WHERE d.task_id = commented.task_id))
        + 0.5::real * COALESCE(commented.best, 0::real))::real AS rank
    FROM (SELECT task_id, ts_rank(search_doc, ${terms}) AS rank FROM task_search WHERE search_doc @@ ${terms}) own
    FULL JOIN (SELECT task_id, max(ts_rank(search_doc, ${terms})) AS best FROM comments WHERE search_doc @@ ${terms} GROUP BY task_id) commented
      ON commented.task_id = own.task_id
  )`.as('matches');
  const rank = sql<number>`matches.rank`;
  let ranked = query.innerJoin(matches, 'matches.task_id', 'tasks.id').select(['tasks.id', rank.as('rank')]);
  if (search.after) ranked = ranked.where(sql<boolean>`(${rank}, tasks.id) < (${search.after.rank}::real, ${search.after.id})`);
  // Rank every match, keep one page, and only then read the page's rows: the task columns' own
  // subqueries (waiting_on, artifacts, children) ran for every match otherwise (388 ms for 19,600).
  const page = ranked.orderBy(sql`${rank}`, 'desc').orderBy('tasks.id', 'desc').limit(q.limit + 1).as('page');
  return db
    .selectFrom('tasks')
    .innerJoin(page, 'page.id', 'tasks.id')
    .select([...columns, sql<string>`page.rank::text`.as('search_rank')])
    .orderBy('page.rank', 'desc')
    .orderBy('tasks.id', 'desc')
    .execute();
}

/**
 * What a search matches: `websearch_to_tsquery` of the text, or, while its last word may still be
 * being typed (`trailingWord`), that or the text before it with the last word as the start of a
 * word (unstemmed, `simple`: "stag" finds "staging", whose English stem is "stage"). It only ever
 * adds matches: what the text finds whole it still finds (spec/collaboration.md, "Search").
 */
function searchTerms(q: string) {
  const whole = sql`websearch_to_tsquery('english', ${q})`;
  const typed = trailingWord(q);
  if (!typed) return whole;
  const started = sql`to_tsquery('simple', ${`${typed.word}:*`})`;
  // A word alone is only its start; before it, the words typed so far, whole.
  const withBefore = /[\p{L}\p{N}]/u.test(typed.before) ? sql`(websearch_to_tsquery('english', ${typed.before}) && ${started})` : started;
  return sql`(${whole} || ${withBefore})`;
}

/** How many lexemes a search leaves once stop words and punctuation are dropped (0: it can match nothing). */
export async function searchTermCount(db: Kysely<DB>, q: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT numnode(websearch_to_tsquery('english', ${q})) AS n`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** Past this many events, a `since` delta walks the tasks instead of reading the events. */
const SHORT_DELTA_EVENTS = 5000;

/** The task ids with an event after `seq`, when fewer than `SHORT_DELTA_EVENTS` events came after it; otherwise undefined. */
async function subjectsChangedAfter(db: Kysely<DB>, seq: string): Promise<string[] | undefined> {
  const rows = await db.selectFrom('events').select('subject').where('seq', '>', seq).orderBy('seq').limit(SHORT_DELTA_EVENTS + 1).execute();
  if (rows.length > SHORT_DELTA_EVENTS) return undefined;
  return [...new Set(rows.map((r) => r.subject).filter((subject) => subject.startsWith('tsk_')))];
}
