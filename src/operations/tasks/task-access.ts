import type { Principal } from '../../domain/principal.ts';
import { BatonError } from '../../errors.ts';
import type { TaskRow } from '../../store/tasks.ts';

/**
 * Whose task an agent may act on (spec/collaboration.md, "Assignment"): humans and agents with
 * `agents:admin` act on any task; another agent on unassigned tasks and its own. Taking someone
 * else's work is for humans. tasks_assign and tasks_update both ask here, so the rule is one.
 */
export function actsOnAnyTask(actor: Principal): boolean {
  return actor.kind === 'human' || actor.scopes.has('agents:admin');
}

/** The task is assigned to a principal other than the caller. */
export function assignedToOther(row: Pick<TaskRow, 'assignee_id'>, actor: Principal): boolean {
  return row.assignee_id !== null && row.assignee_id !== actor.id;
}

/**
 * The task is another principal's work: assigned to another, or in review handed in by another
 * (claiming does not assign, so the hand-in says whose work it is).
 */
export function othersWork(row: Pick<TaskRow, 'assignee_id' | 'status' | 'handoff'>, actor: Principal): boolean {
  return assignedToOther(row, actor) || (row.status === 'in_review' && row.handoff !== null && row.handoff.by.id !== actor.id);
}

/** 403 not_your_task naming the assignee; `rule` says what an agent may do instead. */
export function notYourTask(row: Pick<TaskRow, 'id' | 'assignee_id' | 'assignee_kind' | 'handoff'>, rule: string): BatonError {
  if (row.assignee_id === null) return new BatonError('not_your_task', `Task ${row.id} is in review, handed in by ${row.handoff?.by.kind} ${row.handoff?.by.id}; ${rule}.`);
  return new BatonError('not_your_task', `Task ${row.id} is assigned to ${row.assignee_kind} ${row.assignee_id}; ${rule}.`, {
    extra: { assignee: { id: row.assignee_id, kind: row.assignee_kind } },
  });
}
