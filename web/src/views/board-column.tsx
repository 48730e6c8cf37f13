import { useState } from 'preact/hooks';
import { StatusBadge } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import type { Status, Task } from '../types.ts';
import type { CardSelect } from './bulk-bar.tsx';
import { TaskCard } from './task-card.tsx';

/** Cards a column renders at first and adds per "Show more": a column of 1,000 never renders 1,000 cards. */
export const COLUMN_PAGE = 30;

interface ColumnProps {
  status: Status;
  /** The swimlane's name, when the board has swimlanes. */
  lane: string | null;
  /** Every task of the column that passes the filters, sorted. */
  tasks: readonly Task[];
  /** How many of them are rendered. */
  shown: number;
  onShowMore: () => void;
  now: number;
  /** Lease id → when it was granted, for "held for". */
  heldSince: ReadonlyMap<string, number>;
  busy: string | null;
  selected: string | null;
  onMove: (task: Task, to: Status) => void;
  /** Archives a finished card, or unarchives an archived one; without it cards offer neither. */
  onArchive?: ((task: Task) => void) | undefined;
  /** A card was dropped here: its task id. */
  onDropTask: (id: string, status: Status) => void;
  /** Checkboxes for bulk actions. */
  select?: CardSelect;
  /** Shows only its head (count, and still a drop target). */
  collapsed?: boolean;
  /** Collapses or expands it; without it the column cannot collapse (a phone's single column). */
  onCollapse?: (() => void) | undefined;
}

/** One status column: its count, its first `shown` cards, "Show more", and a drop target for cards. */
export function BoardColumn({ status, lane, tasks, shown, onShowMore, now, heldSince, busy, selected, onMove, onArchive, onDropTask, select, collapsed = false, onCollapse }: ColumnProps) {
  const [over, setOver] = useState(false);
  const hidden = tasks.length - Math.min(shown, tasks.length);
  return (
    <section
      class={`column column-${status}${over ? ' column-drop' : ''}${collapsed ? ' column-collapsed' : ''}`}
      aria-label={`${lane ? `${lane}, ` : ''}${STATUS_LABEL[status]}: ${tasks.length} tasks`}
      data-status={status}
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = 'move';
        if (!over) setOver(true);
      }}
      onDragLeave={(e) => {
        if (!e.currentTarget.contains(e.relatedTarget as Node | null)) setOver(false);
      }}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        const id = e.dataTransfer?.getData('text/plain');
        if (id) onDropTask(id, status);
      }}
    >
      <h2 class="column-head">
        <StatusBadge status={status} />
        <span class="count">{tasks.length}</span>
        {onCollapse && (
          <button type="button" class="button-quiet column-collapse" aria-expanded={!collapsed} aria-label={`${collapsed ? 'Expand' : 'Collapse'} ${STATUS_LABEL[status]}${lane ? ` (${lane})` : ''}`} title={collapsed ? 'Expand' : 'Collapse'} onClick={onCollapse}>
            <span aria-hidden="true">{collapsed ? '›' : '‹'}</span>
          </button>
        )}
      </h2>
      {collapsed ? null : tasks.length === 0 ? (
        <p class="column-empty">No tasks</p>
      ) : (
        <ul class="cards">
          {tasks.slice(0, shown).map((task) => (
            <li key={task.id}>
              <TaskCard task={task} now={now} heldSince={task.lease ? heldSince.get(task.lease.id) : undefined} busy={busy === task.id} selected={selected === task.id} onMove={(to) => onMove(task, to)} onArchive={onArchive && (() => onArchive(task))} select={select} />
            </li>
          ))}
        </ul>
      )}
      {!collapsed && hidden > 0 && (
        <button type="button" class="button-quiet column-more" onClick={onShowMore}>
          Show {Math.min(COLUMN_PAGE, hidden)} more <span class="muted">({hidden} not shown)</span>
        </button>
      )}
    </section>
  );
}
