import { useEffect, useRef, useState } from 'preact/hooks';
import { call, pages, type Problem, problemOf } from '../api.ts';
import { useEvents } from '../session.ts';
import type { Task } from '../types.ts';

/** Tasks a page of a delta read. */
const PAGE = 100;
/** A bound on the first read: the newest 10,000 tasks (and every task changed after it). */
const MAX_PAGES = 100;

/** A bound on the archived tasks read when the board shows them: the newest 1,000. */
const ARCHIVED_PAGES = 10;

/**
 * The tasks this board shows, kept current: a full read in pages of 100, shown from the first
 * page on, then on every task event a delta read (`GET /tasks?since=<sync_cursor>`), which also
 * brings tombstones of deleted tasks and tasks archived since (with `archived_at`, for the board to
 * leave out). Archived tasks are read (`archived=only`) once `withArchived` is first true.
 * `complete` is false while later pages are still coming.
 */
export function useTasks(withArchived = false) {
  const [tasks, setTasks] = useState<Map<string, Task> | null>(null);
  const [complete, setComplete] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const cursor = useRef<string | null>(null);
  const syncing = useRef<Promise<void> | null>(null);
  const again = useRef(false);

  const put = (changed: Task[]) =>
    setTasks((current) => {
      const next = new Map(current);
      for (const task of changed) {
        if (task.deleted_at) next.delete(task.id);
        else if ((next.get(task.id)?.version ?? 0) <= task.version) next.set(task.id, task);
      }
      return next;
    });

  const sync = async () => {
    for (;;) {
      const page = await call('tasks_list', { limit: PAGE, ...(cursor.current ? { since: cursor.current } : {}) });
      cursor.current = page.sync_cursor ?? cursor.current;
      put(page.data as Task[]);
      if (!page.has_more) return;
    }
  };
  /** Serialized: a change arriving during a sync triggers one more sync after it. */
  const refresh = () => {
    if (syncing.current) {
      again.current = true;
      return;
    }
    syncing.current = sync()
      .catch(() => undefined)
      .finally(() => {
        syncing.current = null;
        if (again.current) {
          again.current = false;
          refresh();
        }
      });
  };

  useEffect(() => {
    let stopped = false;
    const load = async () => {
      let first = true;
      for await (const page of pages('tasks_list', {}, MAX_PAGES)) {
        if (stopped) return;
        // The first page's sync cursor: a change made while later pages load comes again in the delta read.
        if (first) cursor.current = page.sync_cursor;
        first = false;
        put(page.data as Task[]);
      }
      setComplete(true);
    };
    load().catch((error: unknown) => setProblem(problemOf(error)));
    return () => {
      stopped = true;
    };
  }, []);
  const archivedRead = useRef(false);
  useEffect(() => {
    if (!withArchived || archivedRead.current) return;
    archivedRead.current = true;
    const load = async () => {
      for await (const page of pages('tasks_list', { archived: 'only' }, ARCHIVED_PAGES)) put(page.data as Task[]);
    };
    load().catch((error: unknown) => {
      archivedRead.current = false;
      setProblem(problemOf(error));
    });
  }, [withArchived]);
  useEvents((event) => {
    if (event.subject.startsWith('tsk_') && cursor.current !== null) refresh();
  });
  return { tasks, complete, problem, put };
}

/** A bound on a search: its best 1,000 matches, read in pages of 100. */
const SEARCH_PAGES = 10;

/**
 * Full-text search on the server (`GET /tasks?q=`, spec/collaboration.md#search) for the URL's
 * `q`: the ids of its best matches (up to `SEARCH_PAGES` pages) in rank order, which the board
 * shows in its columns as it shows any filter (archived tasks among them `withArchived`); `more`
 * says the search has matches past those.
 */
export function useSearch(q: string, withArchived = false) {
  const [order, setOrder] = useState<Map<string, number> | null>(null);
  const [more, setMore] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    setProblem(null);
    setOrder(null);
    setMore(false);
    if (!q) return undefined;
    let current = true;
    const read = async () => {
      const found = new Map<string, number>();
      let hasMore = false;
      for await (const page of pages('tasks_list', { q, fields: ['id'], ...(withArchived ? { archived: 'any' as const } : {}) }, SEARCH_PAGES)) {
        if (!current) return;
        for (const task of page.data) found.set(task.id, found.size);
        hasMore = page.has_more;
      }
      if (!current) return;
      setOrder(found);
      setMore(hasMore);
    };
    read().catch((error: unknown) => current && setProblem(problemOf(error)));
    return () => {
      current = false;
    };
  }, [q, withArchived]);
  return { order, more, problem, pending: q !== '' && order === null && problem === null };
}
