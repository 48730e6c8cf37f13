import { call, newKey } from '../api.ts';
import type { Confirmation } from '../confirm.tsx';
import { STATUS_LABEL } from '../format.ts';
import type { Status, Task } from '../types.ts';
import type { Inverse } from '../undo.tsx';

const names = (statuses: readonly Status[]) => statuses.map((s) => STATUS_LABEL[s]).join(' or ');

/**
 * The inverse of a move from `before` to `after`: the same status update (PATCH with If-Match at
 * the moved version, one Idempotency-Key for the toast, so a repeated Undo cannot move twice) back
 * to the status it left. When the state machine has no way back (Done goes only to To do), the
 * sentence that says so. A task changed by someone since is refused by If-Match, never overwritten.
 */
export function undoMove(before: Task, after: Task, onTask: (task: Task) => void): Inverse {
  const back = before.status;
  const stuck = noWayBack(before, after);
  if (stuck) return stuck;
  const key = newKey();
  return async () => onTask((await call('tasks_update', { id: after.id, status: back }, { key, ifMatch: after.version })) as Task);
}

/** Why a task moved from `before` to `after` cannot move back (the state machine has no way), or null when it can. */
export function noWayBack(before: Task, after: Task): string | null {
  if (after.legal_transitions.includes(before.status)) return null;
  return `It cannot go back to ${STATUS_LABEL[before.status]}: from ${STATUS_LABEL[after.status]} a task can move only to ${names(after.legal_transitions)}.`;
}

/** Moving to Cancelled drops the work (agents stop on it): asked first, as a delete is. */
export const cancelConfirmation = (task: Task): Confirmation => ({
  title: `Cancel “${task.title}”?`,
  body: `It leaves ${STATUS_LABEL[task.status]} for Cancelled${task.lease ? ', and its holder’s lease ends' : ''}. It can be reopened as To do later.`,
  confirm: 'Cancel task',
});
