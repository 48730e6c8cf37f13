import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiProblem, get, getAll, type Page, type Problem, problemOf } from '../api.ts';
import { Loading, PageProblem, ProblemNotice, StatusBadge } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import { useNow } from '../hooks.ts';
import { useEvents } from '../session.ts';
import { PRIORITIES, type Priority, STATUSES, type Status, type Task } from '../types.ts';
import { TaskCard } from './task-card.tsx';
import { MoveNotice } from './move-notice.tsx';
import { useMove } from './move.ts';

const RANK: Record<Priority, number> = { urgent: 0, high: 1, normal: 2, low: 3 };
const byPriorityThenRecent = (a: Task, b: Task) => RANK[a.priority] - RANK[b.priority] || b.updated_at.localeCompare(a.updated_at);

/**
 * The tasks this board shows, kept current: one full read, then on every task event a delta read
 * (`GET /tasks?since=<sync_cursor>`), which also brings tombstones of deleted tasks.
 */
function useTasks() {
  const [tasks, setTasks] = useState<Map<string, Task> | null>(null);
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
      const since = cursor.current ? `&since=${cursor.current}` : '';
      const page = await get<Page<Task>>(`/tasks?limit=100${since}`);
      cursor.current = page.sync_cursor ?? cursor.current;
      put(page.data);
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
    getAll<Task>('/tasks').then(
      (res) => {
        cursor.current = res.sync_cursor;
        setTasks(new Map(res.data.map((t) => [t.id, t])));
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  }, []);
  useEvents((event) => {
    if (event.subject.startsWith('tsk_') && cursor.current !== null) refresh();
  });
  return { tasks, problem, put };
}

/** Columns by status; live; filters; moves by select or drag and drop. */
export function Board() {
  const { tasks, problem, put } = useTasks();
  const { move, failed, busy, dismiss } = useMove((task) => put([task]));
  const now = useNow();
  const [query, setQuery] = useState('');
  const [priority, setPriority] = useState<Priority | ''>('');
  const [label, setLabel] = useState('');
  const search = useSearch();

  const all = useMemo(() => [...(tasks?.values() ?? [])], [tasks]);
  const labels = useMemo(() => [...new Set(all.flatMap((t) => t.labels))].sort(), [all]);
  const shown = all.filter(
    (t) =>
      (!query || t.title.toLowerCase().includes(query.toLowerCase())) &&
      (!priority || t.priority === priority) &&
      (!label || t.labels.includes(label)) &&
      (!search.matches || search.matches.has(t.id)),
  );
  const columns = STATUSES.map((status) => ({ status, tasks: shown.filter((t) => t.status === status).sort(byPriorityThenRecent) }));
  const drop = (status: Status, event: DragEvent) => {
    event.preventDefault();
    const task = tasks?.get(event.dataTransfer?.getData('text/plain') ?? '');
    if (task && task.status !== status) void move(task, status);
  };

  if (problem) return <PageProblem problem={problem} />;
  if (!tasks) return <Loading what="the board" />;
  return (
    <section class="page page-wide" aria-labelledby="board-title">
      <div class="page-head">
        <h1 id="board-title">Board</h1>
        <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <input type="search" aria-label="Filter by title" placeholder="Filter by title" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
          <select aria-label="Filter by priority" value={priority} onChange={(e) => setPriority(e.currentTarget.value as Priority | '')}>
            <option value="">Any priority</option>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
          <select aria-label="Filter by label" value={label} onChange={(e) => setLabel(e.currentTarget.value)}>
            <option value="">Any label</option>
            {labels.map((l) => (
              <option key={l} value={l}>
                {l}
              </option>
            ))}
          </select>
          {(query || priority || label) && (
            <button type="button" class="button-quiet" onClick={() => (setQuery(''), setPriority(''), setLabel(''))}>
              Clear
            </button>
          )}
        </form>
      </div>
      <form
        class="filters text-search"
        role="search"
        aria-label="Search tasks"
        onSubmit={(e) => {
          e.preventDefault();
          void search.run();
        }}
      >
        <input type="search" aria-label="Search titles, descriptions and comments" placeholder="Search titles, descriptions and comments" value={search.text} onInput={(e) => search.setText(e.currentTarget.value)} />
        <button type="submit">Search</button>
        {search.matches && (
          <>
            <span class="muted" role="status">
              {search.matches.size === 0 ? 'No matches' : `${search.matches.size} match${search.matches.size === 1 ? '' : 'es'}`}
            </span>
            <button type="button" class="button-quiet" onClick={search.clear}>
              Clear search
            </button>
          </>
        )}
      </form>
      {search.problem && <ProblemNotice problem={search.problem} />}
      {all.length === 0 && <p class="empty">No tasks yet. Create one with New task (or press c), or let an agent create them over the API.</p>}
      <div aria-live="polite">{failed && <MoveNotice failed={failed} onMove={(t, to, key) => void move(t, to, key)} onDismiss={dismiss} />}</div>
      <div class="board">
        {columns.map((column) => (
          <section
            key={column.status}
            class={`column column-${column.status}`}
            aria-label={`${STATUS_LABEL[column.status]}: ${column.tasks.length} tasks`}
            data-status={column.status}
            onDragOver={(e) => e.preventDefault()}
            onDrop={(e) => drop(column.status, e)}
          >
            <h2 class="column-head">
              <StatusBadge status={column.status} />
              <span class="count">{column.tasks.length}</span>
            </h2>
            {column.tasks.length === 0 ? (
              <p class="column-empty">No tasks</p>
            ) : (
              <ul class="cards">
                {column.tasks.map((task) => (
                  <li key={task.id}>
                    <TaskCard task={task} now={now} busy={busy === task.id} onMove={(to) => void move(task, to)} />
                  </li>
                ))}
              </ul>
            )}
          </section>
        ))}
      </div>
    </section>
  );
}

/**
 * Full-text search on the server (`GET /tasks?q=`, spec/collaboration.md#search): the best 100
 * matches' ids, which the board then shows in its columns as it shows any filter.
 */
function useSearch() {
  const [text, setText] = useState('');
  const [matches, setMatches] = useState<Set<string> | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const run = async () => {
    setProblem(null);
    if (!text.trim()) return setMatches(null);
    try {
      const page = await get<Page<{ id: string }>>(`/tasks?q=${encodeURIComponent(text)}&limit=100&fields=id`);
      setMatches(new Set(page.data.map((t) => t.id)));
    } catch (error) {
      setMatches(null);
      setProblem(error instanceof ApiProblem ? error.problem : null);
    }
  };
  const clear = () => {
    setText('');
    setMatches(null);
    setProblem(null);
  };
  return { text, setText, matches, problem, run, clear };
}
