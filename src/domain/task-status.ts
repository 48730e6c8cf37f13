/** Task statuses. The state machine reads only these. */
export const TASK_STATUSES = ['todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** Finished work: the statuses the state machine leaves only by a reopen to todo. */
export const FINISHED_STATUSES = ['done', 'cancelled'] as const satisfies readonly TaskStatus[];

/**
 * The state machine: every legal target from each status. Read by the service, by
 * `legal_transitions`, by the errors and by the served docs alike (DESIGN.md §4).
 */
export const TRANSITIONS: Record<TaskStatus, readonly TaskStatus[]> = {
  todo: ['in_progress', 'blocked', 'cancelled'],
  in_progress: ['todo', 'in_review', 'blocked', 'cancelled'],
  in_review: ['done', 'in_progress', 'cancelled'],
  blocked: ['todo', 'cancelled'],
  done: ['todo'],
  cancelled: ['todo'],
};

/** Which operation performs a transition. Most are a status update; two have their own operation. */
export type TransitionVia = 'tasks_update' | 'tasks_claim' | 'leases_release';

export function transitionVia(from: TaskStatus, to: TaskStatus): TransitionVia {
  if (from === 'todo' && to === 'in_progress') return 'tasks_claim';
  if (from === 'in_progress' && to === 'todo') return 'leases_release';
  return 'tasks_update';
}

/** Who may perform a transition beyond the operation's own scope. */
export type TransitionGuard = 'anyone' | 'human_or_reviewer' | 'human';

export function transitionGuard(from: TaskStatus, to: TaskStatus): TransitionGuard {
  // Approving and sending work back are review decisions, as through tasks_review.
  if (from === 'in_review' && (to === 'done' || to === 'in_progress')) return 'human_or_reviewer';
  if ((from === 'done' || from === 'cancelled') && to === 'todo') return 'human';
  return 'anyone';
}

export function isLegalTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** The hint for an illegal move, specific where the table has a reason. */
export function illegalTransitionHint(from: TaskStatus, to: TaskStatus): string {
  if (from === 'in_progress' && to === 'done') {
    return 'Work is never marked done directly: open a pull request, then move the task to `in_review`; a human (or a reviewer) marks it done.';
  }
  const legal = TRANSITIONS[from];
  return `From \`${from}\` a task may move to: ${legal.map((s) => `\`${s}\``).join(', ')}.`;
}
