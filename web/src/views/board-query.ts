import { type Actor, PRIORITIES, type Priority, type Task } from '../types.ts';

export const SORTS = ['priority', 'updated', 'newest', 'title', 'relevance'] as const;
export type Sort = (typeof SORTS)[number];
export const SORT_LABEL: Record<Sort, string> = {
  priority: 'Priority, then recently updated',
  updated: 'Recently updated',
  newest: 'Newest first',
  title: 'Title, A to Z',
  relevance: 'Best match first',
};

export const GROUPS = ['assignee', 'label'] as const;
export type Group = (typeof GROUPS)[number];

/** What the board shows, as kept in its URL (`/?q=…&priority=…&label=…&who=…&group=…&sort=…&hide=closed&archived=show`): reload, back and a shared link restore it. */
export interface BoardQuery {
  /** Ranked full-text search on the server (`GET /tasks?q=`). */
  q: string;
  priority: Priority | '';
  label: string;
  /** Whose tasks: `me`, `none` (nobody's), a principal id (assigned to or held by them), or '' for everyone's. */
  who: string;
  /** Swimlanes: one row of columns per person on the task, or per label; '' for none. */
  group: Group | '';
  sort: Sort;
  /** Hide the Done and Cancelled columns (`hide=closed`). */
  hideClosed: boolean;
  /** Show archived tasks too (`archived=show`); they are off the board otherwise. */
  showArchived: boolean;
}

/** The sort when the URL names none: the best match while searching, priority otherwise. */
const defaultSort = (q: string): Sort => (q ? 'relevance' : 'priority');

export function parseBoardQuery(search: string): BoardQuery {
  const params = new URLSearchParams(search);
  const q = params.get('q')?.trim() ?? '';
  const priority = params.get('priority') ?? '';
  const sort = params.get('sort') ?? '';
  const known = (SORTS as readonly string[]).includes(sort) && (sort !== 'relevance' || q) ? (sort as Sort) : defaultSort(q);
  const group = params.get('group') ?? '';
  return {
    q,
    priority: (PRIORITIES as readonly string[]).includes(priority) ? (priority as Priority) : '',
    label: params.get('label') ?? '',
    who: params.get('who') ?? '',
    group: (GROUPS as readonly string[]).includes(group) ? (group as Group) : '',
    sort: known,
    hideClosed: params.get('hide') === 'closed',
    showArchived: params.get('archived') === 'show',
  };
}

/** `query` with `change` applied; a new search switches a default sort to the new default (best match while searching). */
export function withChange(query: BoardQuery, change: Partial<BoardQuery>): BoardQuery {
  const next = { ...query, ...change };
  if (change.q !== undefined && change.sort === undefined && query.sort === defaultSort(query.q)) next.sort = defaultSort(next.q);
  if (!next.q && next.sort === 'relevance') next.sort = 'priority';
  return next;
}

/** The board's path for `query`; the default sort and empty filters are left out so the plain board stays `/`. */
export function boardPath(query: BoardQuery): string {
  const params = new URLSearchParams();
  if (query.q) params.set('q', query.q);
  if (query.priority) params.set('priority', query.priority);
  if (query.label) params.set('label', query.label);
  if (query.who) params.set('who', query.who);
  if (query.group) params.set('group', query.group);
  if (query.sort !== defaultSort(query.q)) params.set('sort', query.sort);
  if (query.hideClosed) params.set('hide', 'closed');
  if (query.showArchived) params.set('archived', 'show');
  const s = params.toString();
  return s ? `/?${s}` : '/';
}

/** Who is on a task: the lease holder while it is held, else the assignee; null for nobody. */
export const onIt = (task: Task): Actor | null => task.lease?.holder ?? task.assignee ?? null;

/** Whether `task` is `who`'s (`me` resolved to `self`): assigned to or held by them; `none`: neither assigned nor held. */
export function isWhose(task: Task, who: string, self: string): boolean {
  if (!who) return true;
  if (who === 'none') return !task.assignee && !task.lease;
  const id = who === 'me' ? self : who;
  return task.assignee?.id === id || task.lease?.holder.id === id;
}

/** The swimlane a task sits in: the person on it (or `none`), or its first label in alphabetical order (or `none`). */
export function laneOf(task: Task, group: Group): string {
  if (group === 'assignee') return onIt(task)?.id ?? 'none';
  return [...task.labels].sort()[0] ?? 'none';
}

const RANK: Record<Priority, number> = { urgent: 0, high: 1, normal: 2, low: 3 };

/** A comparator for `sort`; `relevance` follows the server's ranking (`order`: id → position). */
export function comparator(sort: Sort, order: ReadonlyMap<string, number> | null): (a: Task, b: Task) => number {
  const recent = (a: Task, b: Task) => b.updated_at.localeCompare(a.updated_at);
  switch (sort) {
    case 'priority':
      return (a, b) => RANK[a.priority] - RANK[b.priority] || recent(a, b);
    case 'updated':
      return recent;
    case 'newest':
      // Task ids are ULIDs: their order is the order of creation.
      return (a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
    case 'title':
      return (a, b) => a.title.localeCompare(b.title);
    case 'relevance':
      return (a, b) => (order?.get(a.id) ?? Number.MAX_SAFE_INTEGER) - (order?.get(b.id) ?? Number.MAX_SAFE_INTEGER);
  }
}
