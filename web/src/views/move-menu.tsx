import { useDisclosure } from '../hooks.ts';
import { STATUS_LABEL } from '../format.ts';
import { STATUSES, type Status, type Task } from '../types.ts';

/** Targets that end the work (approving it, dropping it): listed after the others, so the first target, which takes focus, is never one of them. */
const FINAL: ReadonlySet<Status> = new Set(['done', 'cancelled']);

/** The task's legal targets, Done and Cancelled last: the order of the "Move to…" menu and the command palette. */
export const legalTargets = (task: Task): Status[] => [...task.legal_transitions].sort((a, b) => Number(FINAL.has(a)) - Number(FINAL.has(b)));

/**
 * A card's keyboard path for what dragging does: "Move to…" opens a list of buttons, the legal
 * targets first (Done and Cancelled last of them), the others marked (trying one explains why
 * not). The first target takes focus; Escape closes and gives focus back to the toggle. A
 * disclosure of plain buttons rather than a `<select>`, whose arrow keys would move the task
 * before the user chose. Used by the board's cards and the task page.
 */
export function MoveMenu({ task, onMove, disabled }: { task: Task; onMove: (to: Status) => void; disabled: boolean }) {
  const { open, setOpen, toggle, list, containerProps } = useDisclosure();
  const legal = legalTargets(task);
  const others = STATUSES.filter((s) => s !== task.status && !task.legal_transitions.includes(s));
  const id = `move-${task.id}`;
  const choose = (to: Status) => {
    setOpen(false);
    onMove(to);
  };
  return (
    <div class="move-menu" {...containerProps}>
      <button
        ref={toggle}
        type="button"
        class="move-toggle"
        aria-expanded={open}
        aria-controls={open ? id : undefined}
        aria-keyshortcuts="m"
        disabled={disabled}
        onClick={() => setOpen(!open)}
      >
        Move to…<span class="sr-only"> (“{task.title}”)</span>
      </button>
      {open && (
        <div id={id} ref={list} class="move-options" role="group" aria-label={`Move “${task.title}” to`}>
          {legal.map((s) => (
            <button key={s} type="button" class="move-option" onClick={() => choose(s)}>
              {STATUS_LABEL[s]}
            </button>
          ))}
          {others.length > 0 && (
            <>
              <span class="move-others">Not allowed from {STATUS_LABEL[task.status]}:</span>
              {others.map((s) => (
                <button key={s} type="button" class="move-option move-illegal" onClick={() => choose(s)}>
                  {STATUS_LABEL[s]}
                </button>
              ))}
            </>
          )}
        </div>
      )}
    </div>
  );
}
