import { ActorChip, Labels, PriorityBadge } from '../components.tsx';
import { STATUS_LABEL, timeLeft } from '../format.ts';
import { STATUSES, type Status, type Task } from '../types.ts';
import { MoveMenu } from './move-menu.tsx';

/** Every other status: the legal moves first, the rest marked (trying one explains why not). */
export function MoveSelect({ task, onMove, disabled }: { task: Task; onMove: (to: Status) => void; disabled?: boolean }) {
  const others = STATUSES.filter((s) => s !== task.status && !task.legal_transitions.includes(s));
  return (
    <select
      class="move"
      aria-label={`Move “${task.title}” to another status`}
      value=""
      disabled={disabled}
      onChange={(e) => {
        const to = e.currentTarget.value as Status;
        e.currentTarget.value = '';
        if (to) onMove(to);
      }}
    >
      <option value="">Move to…</option>
      <optgroup label="Allowed">
        {task.legal_transitions.map((s) => (
          <option key={s} value={s}>
            {STATUS_LABEL[s]}
          </option>
        ))}
      </optgroup>
      {others.length > 0 && (
        <optgroup label={`Not allowed from ${STATUS_LABEL[task.status]}`}>
          {others.map((s) => (
            <option key={s} value={s}>
              {STATUS_LABEL[s]}
            </option>
          ))}
        </optgroup>
      )}
    </select>
  );
}

/** A board card: draggable to another column, or moved from its "Move to…" menu; `selected` is the `j`/`k` selection. */
export function TaskCard({ task, now, busy, selected, onMove }: { task: Task; now: number; busy: boolean; selected: boolean; onMove: (to: Status) => void }) {
  return (
    <article
      class={`task-card priority-edge-${task.priority}${selected ? ' task-card-selected' : ''}`}
      draggable
      data-task-id={task.id}
      aria-busy={busy}
      onDragStart={(e) => {
        e.dataTransfer?.setData('text/plain', task.id);
        if (e.dataTransfer) e.dataTransfer.effectAllowed = 'move';
      }}
    >
      <div class="task-card-top">
        <PriorityBadge priority={task.priority} />
        <a class="task-title" href={`/tasks/${task.id}`}>
          {task.title}
        </a>
      </div>
      <Labels labels={task.labels} />
      {task.lease && (
        <p class="lease-line">
          <ActorChip actor={task.lease.holder} />
          <span class={Date.parse(task.lease.expires_at) < now ? 'lease-time lease-expired' : 'lease-time'}>{timeLeft(task.lease.expires_at, now)}</span>
        </p>
      )}
      {task.overdue && <p class="overdue">Overdue</p>}
      {task.parent_id && (
        <p class="subtask-of">
          Subtask of <a href={`/tasks/${task.parent_id}`}>parent</a>
        </p>
      )}
      {task.waiting_on.length > 0 && <p class="waiting">Waiting on {task.waiting_on.length} task{task.waiting_on.length > 1 ? 's' : ''}</p>}
      <MoveMenu task={task} onMove={onMove} disabled={busy} />
    </article>
  );
}
