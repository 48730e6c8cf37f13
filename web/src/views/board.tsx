import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { useNames } from '../directory.ts';
import { Loading, PageProblem, ProblemNotice } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import { useNow, useShortcuts } from '../hooks.ts';
import { navigate } from '../router.ts';
import { STATUSES, type Status, type Task } from '../types.ts';
import { BoardColumn, COLUMN_PAGE } from './board-column.tsx';
import { BoardFilters } from './board-filters.tsx';
import { can, useSession } from '../session.ts';
import { type BoardQuery, boardPath, comparator, isWhose, laneOf, onIt, parseBoardQuery, withChange } from './board-query.ts';
import { useSearch, useTasks } from './board-tasks.ts';
import { useHeldSince } from './held-since.ts';
import { MoveNotice } from './move-notice.tsx';
import { useSelection } from '../bulk.ts';
import { BoardBulk } from './board-bulk.tsx';
import { useMove } from './move.ts';
import { useConfirm } from '../confirm.tsx';
import { useUndo } from '../undo.tsx';
import { useBoardPrefs, useNarrow } from './board-prefs.ts';
import { BoardViews } from './board-views.tsx';
import { ColumnTabs, PANEL, tabId } from './column-tabs.tsx';
import { cancelConfirmation, undoMove } from './undo-move.ts';
import { useArchive } from './task-archive.tsx';

/** The columns "Hide Done and Cancelled" hides. */
const CLOSED: ReadonlySet<Status> = new Set(['done', 'cancelled']);

const cardElement = (id: string) => document.querySelector<HTMLElement>(`[data-task-id="${CSS.escape(id)}"]`);

/** Gives focus back to a moved card's "Move to…" when the move left it nowhere (its menu closed, its column changed). */
const refocus = (id: string) =>
  requestAnimationFrame(() => {
    if (document.activeElement === document.body || document.activeElement === null) cardElement(id)?.querySelector<HTMLElement>('.move-toggle')?.focus();
  });

/** "No matches", "1 match", "1,000+ matches" (`more`: the search has matches past those read). */
const matches = (n: number, more: boolean) => (n === 0 ? `No matches${more ? ' among the best' : ''}` : `${n.toLocaleString('en')}${more ? '+' : ''} match${n === 1 && !more ? '' : 'es'}`);

/**
 * What a search found, counted as the board shows it: the matches that pass the other filters too
 * (the cards in the columns), and, when those filters leave some out, how many the search alone found.
 */
function SearchCount({ q, shown, found, more, filtered }: { q: string; shown: number; found: number; more: boolean; filtered: boolean }) {
  return (
    <p class="muted" role="status">
      {matches(shown, more)} for “{q}”{filtered && shown !== found && ` with these filters (${matches(found, more).toLowerCase()} without them)`}
    </p>
  );
}

/**
 * Columns by status, live. Filters, search and sort live in the URL (`search`); moves by drag and
 * drop or a card's "Move to…" menu; keys: `/` search, `j`/`k` select, `Enter` open, `m` move.
 */
export function Board({ search }: { search: string }) {
  const query = useMemo(() => parseBoardQuery(search), [search]);
  const { tasks, complete, problem, put } = useTasks(query.showArchived);
  const found = useSearch(query.q, query.showArchived);
  const { move, failed, busy, dismiss } = useMove((task) => put([task]));
  const now = useNow();
  const [announcement, setAnnouncement] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const [shown, setShown] = useState<Record<string, number>>({});
  const session = useSession();
  const { whoami } = session;
  const searchBox = useRef<HTMLInputElement>(null);
  const selection = useSelection();
  useEffect(() => setShown({}), [search]);
  const { prefs, update } = useBoardPrefs(whoami.principal.id);
  const narrow = useNarrow();
  const confirm = useConfirm();
  const showUndo = useUndo();
  const archive = useArchive((task) => put([task]));
  const archiveCard = async (task: Task) => {
    setAnnouncement('');
    const changed = await archive.send(task, !task.archived_at);
    if (changed) setAnnouncement(`${changed.archived_at ? 'Archived' : 'Unarchived'} “${task.title}”.`);
    refocus(task.id);
  };
  const statuses = STATUSES.filter((s) => !query.hideClosed || !CLOSED.has(s));
  // On a phone, one column at a time (the tab's); collapsing is for wide screens.
  const tab = statuses.includes(prefs.tab) ? prefs.tab : 'todo';
  const collapsed = new Set(narrow ? [] : prefs.collapsed);
  const onScreen = (status: Status) => !narrow || status === tab;

  const all = useMemo(() => [...(tasks?.values() ?? [])], [tasks]);
  const labels = useMemo(() => [...new Set(all.flatMap((t) => t.labels))].sort(), [all]);
  const names = useNames(query.group && query.group !== 'label' ? all.map((t) => onIt(t)?.id) : []);
  const lanes = useMemo(() => {
    const searching = query.q !== '' && !found.problem;
    const keep = (t: Task) =>
      (!query.priority || t.priority === query.priority) && (!query.label || t.labels.includes(query.label)) && isWhose(t, query.who, whoami.principal.id) && (!searching || found.order?.has(t.id) === true) && (!query.hideClosed || !CLOSED.has(t.status)) && (query.showArchived || !t.archived_at);
    const byLane = new Map<string, Task[]>();
    for (const task of all) {
      if (!keep(task)) continue;
      const lane = query.group ? laneOf(task, query.group) : '';
      const into = byLane.get(lane);
      if (into) into.push(task);
      else byLane.set(lane, [task]);
    }
    const order = comparator(query.sort, found.order);
    const laneName = (lane: string, tasks: Task[]) => {
      if (lane === 'none') return query.group === 'label' ? 'No label' : 'Nobody';
      if (query.group === 'label') return lane;
      const who = tasks.map(onIt).find((a) => a?.id === lane);
      return `${names.get(lane) ?? lane}${who ? ` (${who.kind})` : ''}`;
    };
    return [...byLane]
      .map(([lane, tasks]) => ({ lane, name: query.group ? laneName(lane, tasks) : null, tasks }))
      // Lanes by name, nobody's (or unlabelled) last; without swimlanes, the one lane.
      .sort((a, b) => Number(a.lane === 'none') - Number(b.lane === 'none') || (a.name ?? '').localeCompare(b.name ?? ''))
      .map(({ lane, name, tasks }) => ({
        lane,
        name,
        columns: STATUSES.filter((s) => !query.hideClosed || !CLOSED.has(s)).map((status) => ({ key: `${lane}/${status}`, status, tasks: tasks.filter((t) => t.status === status).sort(order) })),
      }));
  }, [all, query, found.order, found.problem, names, names.size, whoami]);
  const allColumns = lanes.length > 0 ? lanes.flatMap((l) => l.columns) : statuses.map((status) => ({ key: `/${status}`, status, tasks: [] as Task[] }));
  const columns = allColumns.filter((c) => onScreen(c.status));
  const heldSince = useHeldSince(useMemo(() => all.flatMap((t) => (t.lease ? [t.lease.id] : [])), [all]));
  const shownIn = (key: string) => shown[key] ?? COLUMN_PAGE;
  /** The rendered cards in reading order, lane by lane, column by column: what `j` and `k` walk. */
  const ids = columns.flatMap((c) => (collapsed.has(c.status) ? [] : c.tasks.slice(0, shownIn(c.key)).map((t) => t.id)));

  const checkable = { selection, order: () => ids };
  const set = (change: Partial<BoardQuery>) => navigate(boardPath(withChange(query, change)));
  const moveCard = async (task: Task, to: Status, key?: string) => {
    if (task.status === to) return;
    if (to === 'cancelled' && !(await confirm.ask(cancelConfirmation(task)))) {
      refocus(task.id);
      return;
    }
    setAnnouncement('');
    // Shown in the new column at once; a refusal puts it back (a re-read newer version wins over this).
    put([{ ...task, status: to }]);
    refocus(task.id);
    let moved: Task | null = null;
    try {
      moved = await move(task, to, key);
    } finally {
      if (!moved) put([task]);
      refocus(task.id);
    }
    setAnnouncement(moved ? `Moved “${task.title}” to ${STATUS_LABEL[to]}.` : `Could not move “${task.title}”; it stays in ${STATUS_LABEL[task.status]}.`);
    if (moved) showUndo(`Moved “${task.title}” to ${STATUS_LABEL[to]}.`, undoMove(task, moved, (t) => put([t])));
  };
  const select = (next: string | undefined) => {
    if (!next) return;
    setSelected(next);
    cardElement(next)?.querySelector<HTMLElement>('.task-title')?.focus();
  };
  const step = (by: number, event: KeyboardEvent) => {
    if (ids.length === 0) return;
    event.preventDefault();
    // `j` on a column's last rendered card shows the column's next page, as "Show more" would, and walks on into it.
    const more = by > 0 ? columns.find((c) => c.tasks.length > shownIn(c.key) && c.tasks[shownIn(c.key) - 1]?.id === selected) : undefined;
    const revealed = more?.tasks[shownIn(more.key)];
    if (more && revealed) {
      setShown({ ...shown, [more.key]: shownIn(more.key) + COLUMN_PAGE });
      setSelected(revealed.id);
      requestAnimationFrame(() => select(revealed.id));
      return;
    }
    const at = selected ? ids.indexOf(selected) : -1;
    select(at < 0 ? ids[0] : ids[Math.max(0, Math.min(ids.length - 1, at + by))]);
  };
  useShortcuts({
    '/': (event) => {
      event.preventDefault();
      searchBox.current?.focus();
      searchBox.current?.select();
    },
    j: (event) => step(1, event),
    k: (event) => step(-1, event),
    Enter: (event) => {
      // A focused link or button does its own thing on Enter.
      if ((event.target as Element).closest('a, button, summary') || !selected || !ids.includes(selected)) return;
      event.preventDefault();
      navigate(`/tasks/${selected}`);
    },
    x: (event) => {
      if (!selected) return;
      event.preventDefault();
      selection.toggle(selected, ids);
    },
    m: (event) => {
      if (!selected) return;
      event.preventDefault();
      cardElement(selected)?.querySelector<HTMLButtonElement>('.move-toggle')?.click();
    },
  });

  if (problem) return <PageProblem problem={problem} />;
  if (!tasks) return <Loading what="the board" />;
  return (
    <section
      class="page page-wide"
      aria-labelledby="board-title"
      onFocusIn={(e) => {
        const id = (e.target as Element).closest('[data-task-id]')?.getAttribute('data-task-id');
        if (id) setSelected(id);
      }}
    >
      <div class="page-head">
        <h1 id="board-title">Board</h1>
        <p class="board-keys muted small" aria-hidden="true">
          <kbd>/</kbd> search · <kbd>j</kbd> <kbd>k</kbd> select · <kbd>Enter</kbd> open · <kbd>m</kbd> move · <kbd>x</kbd> select · <kbd>c</kbd> new task
        </p>
      </div>
      <BoardFilters query={query} labels={labels} searchBox={searchBox} onChange={set} />
      <BoardViews query={query} path={boardPath(query)} views={prefs.views} onViews={update} onChange={set} />
      <BoardBulk selection={selection} tasks={tasks} matching={columns.flatMap((c) => c.tasks)} onTasks={put} />
      {confirm.dialog}
      {query.q && found.pending && <p class="muted">Searching…</p>}
      {query.q && found.order && <SearchCount q={query.q} shown={columns.reduce((n, c) => n + c.tasks.length, 0)} found={found.order.size} more={found.more} filtered={query.priority !== '' || query.label !== ''} />}
      {found.problem && <ProblemNotice problem={found.problem} />}
      {archive.action.problem && <ProblemNotice problem={archive.action.problem} onDismiss={archive.action.dismiss} />}
      {complete && tasks.size === 0 && <p class="empty">No tasks yet. Create one with New task (or press c), or let an agent create them over the API.</p>}
      {!complete && <p class="muted board-loading">Loading more tasks… {tasks.size} so far.</p>}
      <p class="sr-only" role="status" aria-live="polite">
        {announcement}
      </p>
      <div aria-live="polite">{failed && <MoveNotice failed={failed} onMove={(t, to, key) => void moveCard(t, to, key)} onDismiss={dismiss} />}</div>
      {lanes.length === 0 && tasks.size > 0 && <p class="empty">No tasks match these filters.</p>}
      {narrow && (
        <ColumnTabs
          statuses={statuses}
          counts={allColumns.reduce((n, c) => n.set(c.status, (n.get(c.status) ?? 0) + c.tasks.length), new Map<Status, number>())}
          active={tab}
          onSelect={(s) => update({ tab: s })}
        />
      )}
      <div id={narrow ? PANEL : undefined} role={narrow ? 'tabpanel' : undefined} aria-labelledby={narrow ? tabId(tab) : undefined}>
      {lanes.map((lane) => {
        const board = (
          <div class="board" style={narrow ? undefined : { '--board-columns': lane.columns.map((c) => (collapsed.has(c.status) ? 'var(--collapsed-width)' : 'minmax(0, 1fr)')).join(' ') }}>
            {lane.columns.filter((c) => onScreen(c.status)).map((column) => (
              <BoardColumn
                key={column.key}
                status={column.status}
                lane={lane.name}
                collapsed={collapsed.has(column.status)}
                onCollapse={narrow ? undefined : () => update({ collapsed: collapsed.has(column.status) ? prefs.collapsed.filter((s) => s !== column.status) : [...prefs.collapsed, column.status] })}
                tasks={column.tasks}
                shown={shownIn(column.key)}
                onShowMore={() => setShown((s) => ({ ...s, [column.key]: (s[column.key] ?? COLUMN_PAGE) + COLUMN_PAGE }))}
                now={now}
                heldSince={heldSince}
                busy={busy}
                selected={selected}
                select={checkable}
                onMove={(task, to) => void moveCard(task, to)}
                onArchive={can(session, 'tasks_update') ? (task) => void archiveCard(task) : undefined}
                onDropTask={(id, to) => {
                  const task = tasks.get(id);
                  if (task) void moveCard(task, to);
                }}
              />
            ))}
          </div>
        );
        if (lane.name === null) return <div key={lane.lane}>{board}</div>;
        const count = lane.columns.reduce((n, c) => n + c.tasks.length, 0);
        return (
          <section key={lane.lane} class="lane" aria-label={`Swimlane ${lane.name}`} data-lane={lane.lane}>
            <h2 class="lane-head">
              {lane.name} <span class="count">{count}</span>
            </h2>
            {board}
          </section>
        );
      })}
      </div>
    </section>
  );
}
