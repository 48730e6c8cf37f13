import { ActorChip, Labels, PriorityBadge } from '../components.tsx';
import { duration, timeLeft } from '../format.ts';
import type { Status, Task } from '../types.ts';
import { useSession } from '../session.ts';
import { MoveMenu } from './move-menu.tsx';
import { type CardSelect, SelectBox } from './bulk-bar.tsx';
import { isFinished } from './task-archive.tsx';

/** Failed attempts and when the task may be claimed again, on cards that have either (a list item carries them only then). */
function AttemptsLine({ task, now }: { task: Task; now: number }) {
  const { manifest } = useSession();
  const failed = task.attempts ?? 0;
  const limit = task.max_attempts ?? manifest.attempts.default_max_attempts;
  const exhausted = task.blocked_reason === 'attempts_exhausted';
  const waits = task.status === 'todo' && task.not_before && Date.parse(task.not_before) > now ? task.not_before : null;
  const parts = [
    failed === 0 ? null : exhausted ? `Out of attempts (${failed} failed)` : `${failed} failed attempt${failed > 1 ? 's' : ''} of ${limit}`,
    waits ? `claimable in ${duration(Date.parse(waits) - now)}` : null,
  ].filter((part) => part !== null);
  if (parts.length === 0) return null;
  const text = parts.join(' · ');
  return (
    <p class={exhausted ? 'attempts attempts-exhausted' : 'attempts'} data-testid="attempts">
      {text.charAt(0).toUpperCase() + text.slice(1)}
    </p>
  );
}

/**
 * A board card: draggable to another column, or moved from its "Move to…" menu; `selected` is the
 * `j`/`k` selection. Shows who holds it and for how long (`heldSince`, when known), and its assignee
 * when that is someone else or nobody holds it. A finished card offers Archive (`onArchive`), an archived one Unarchive.
 */
export function TaskCard({ task, now, heldSince, busy, selected, onMove, onArchive, select }: { task: Task; now: number; heldSince: number | undefined; busy: boolean; selected: boolean; onMove: (to: Status) => void; onArchive?: (() => void) | undefined; select?: CardSelect | undefined }) {
  const checked = select?.selection.selected.has(task.id) === true;
  return (
    <article
      class={`task-card priority-edge-${task.priority}${selected ? ' task-card-selected' : ''}${checked ? ' task-card-checked' : ''}`}
      draggable
      data-task-id={task.id}
      aria-busy={busy}
      onDragStart={(e) => {
        e.dataTransfer?.setData('text/plain', task.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
      }}
    >
      <div class="task-card-top">
        {select && <SelectBox id={task.id} label={task.title} selection={select.selection} order={select.order} />}
        <PriorityBadge priority={task.priority} />
        <a class="task-title" href={`/tasks/${task.id}`}>
          {task.title}
        </a>
      </div>
      <Labels labels={task.labels} />
      {task.archived_at && <span class="status status-archived">Archived</span>}
      {task.lease && (
        <p class="lease-line" data-testid="holder">
          <span class="muted">Held by</span>
          <ActorChip actor={task.lease.holder} />
          {heldSince !== undefined && <span class="held-for">for {duration(now - heldSince)}</span>}
          <span class={Date.parse(task.lease.expires_at) < now ? 'lease-time lease-expired' : 'lease-time'}>{timeLeft(task.lease.expires_at, now)}</span>
        </p>
      )}
      {task.assignee && task.assignee.id !== task.lease?.holder.id && (
        <p class="lease-line" data-testid="assignee">
          <span class="muted">Assigned to</span>
          <ActorChip actor={task.assignee} />
        </p>
      )}
      {task.overdue && <p class="overdue">Overdue</p>}
      {task.open_asks !== undefined && task.open_asks > 0 && (
        <p class="waiting-human" data-testid="waiting-on-human">
          Waiting on a human ({task.open_asks} open ask{task.open_asks > 1 ? 's' : ''})
        </p>
      )}
      {(task.overdue_asks !== undefined || task.review_overdue) && (
        <p class="overdue" data-testid="sla-overdue">
          {task.review_overdue ? 'Review overdue' : `${task.overdue_asks} ask${(task.overdue_asks ?? 0) > 1 ? 's' : ''} overdue`}
        </p>
      )}
      {task.parent_id && (
        <p class="subtask-of">
          Subtask of <a href={`/tasks/${task.parent_id}`}>parent</a>
        </p>
      )}
      {task.waiting_on.length > 0 && <p class="waiting">Waiting on {task.waiting_on.length} task{task.waiting_on.length > 1 ? 's' : ''}</p>}
      <AttemptsLine task={task} now={now} />
      <div class="card-actions">
        <MoveMenu task={task} onMove={onMove} disabled={busy} />
        {onArchive && (task.archived_at || isFinished(task)) && (
          <button type="button" class="button-quiet card-archive" disabled={busy} onClick={onArchive}>
            {task.archived_at ? 'Unarchive' : 'Archive'}
            <span class="sr-only"> “{task.title}”</span>
          </button>
        )}
      </div>
    </article>
  );
}
