import { humansWithScope } from '../../store/agents.ts';
import type { Tx } from '../../store/connection.ts';
import { closeInboxItems, insertInboxItems } from '../../store/inbox.ts';
import type { TaskRow } from '../../store/tasks.ts';
import { inboxItem } from '../asks/ask-flow.ts';
import type { OperationContext } from '../define-operation.ts';

/** A `changed` item for the human a task is assigned to, when someone else changed `fields` of it (loop guard: not for one's own change). */
export async function noteChangeToAssignee(tx: Tx, ctx: OperationContext, row: TaskRow, change: { fields: readonly string[]; status?: string }): Promise<void> {
  if (row.assignee_kind !== 'human' || row.assignee_id === null || row.assignee_id === ctx.actor.id) return;
  const what = change.status === undefined ? change.fields.join(', ') : `${row.status} → ${change.status}`;
  await insertInboxItems(tx, [inboxItem(ctx.ids, ctx.now, { principal_id: row.assignee_id, kind: 'changed', task_id: row.id, ref_id: row.id, by_id: ctx.actor.id, excerpt: `${what}: ${row.title}`.slice(0, 200) })]);
}

/** Work just handed in waits in the inbox of each enabled human who may review it (`tasks:review`), but whoever handed it in. */
export async function deliverToReview(tx: Tx, ctx: OperationContext, tasks: readonly { id: string; summary: string }[]): Promise<void> {
  if (tasks.length === 0) return;
  const reviewers = await humansWithScope(tx, 'tasks:review', ctx.actor.id);
  await insertInboxItems(tx, tasks.flatMap((task) => reviewers.map((principal) => inboxItem(ctx.ids, ctx.now, { principal_id: principal, kind: 'to_review', task_id: task.id, ref_id: task.id, by_id: ctx.actor.id, excerpt: task.summary.slice(0, 200) }))));
}

/** A task leaving review (decided, moved or cancelled) turns its `to_review` items done. */
export async function closeToReview(tx: Tx, ctx: OperationContext, taskId: string): Promise<void> {
  await closeInboxItems(tx, taskId, 'to_review', ctx.now);
}
