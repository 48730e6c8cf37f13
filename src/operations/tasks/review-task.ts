import { insertInboxItems } from '../../store/inbox.ts';
import { closeAsksOfEndedTask, inboxItem } from '../asks/ask-flow.ts';
import { closeToReview } from '../inbox/task-inbox.ts';
import { z } from 'zod';
import { TRANSITIONS, type TaskStatus } from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import { type TaskChanges, updateTask } from '../../store/tasks.ts';
import { lockLiveTask, postComment } from '../comments/comment-access.ts';
import { commentBody } from '../comments/comment-schema.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { shapeTask } from './task-view.ts';
import { taskId, fullTaskOutput } from './task-schema.ts';
import { moveLease } from './update-task.ts';
import { checkNotOwnHandIn } from './separation-of-duties.ts';
import { closeChildren } from './task-tree.ts';
import { lockTaskTreeForClose } from '../../store/task-tree.ts';

export const reviewTask = defineOperation({
  name: 'tasks_review',
  summary: 'Decide on work in review: `approve` (→ done) or `request_changes` with a comment (→ in_progress, back to the same agent).',
  description:
    'request_changes posts `comment` to the thread; the task returns to in_progress under a fresh lease for its assignee (else its last holder, made assignee), shown as `discussion.changes_requested`; if that lease lapses, to todo, still assigned. ' +
    'Whoever handed it in may not approve it (403 separation_of_duties).',
  kind: 'write',
  scope: 'tasks:review',
  approval: 'none',
  http: { method: 'POST', path: '/tasks/{id}/review' },
  input: z.strictObject({
    id: taskId,
    decision: z.enum(['approve', 'request_changes']),
    comment: commentBody.optional().describe('Required with request_changes: what to change. Optional with approve.'),
  }),
  output: fullTaskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    if (input.decision === 'request_changes' && input.comment === undefined) {
      throw new BatonError('validation_failed', 'request_changes needs a comment saying what to change.', {
        extra: { errors: [{ pointer: '/comment', detail: 'required with decision request_changes', location: 'body' }] },
      });
    }
    // An approval checks the subtasks: the tree lock first if it has any, as tasks_update takes it (update-task.ts).
    if (input.decision === 'approve') await lockTaskTreeForClose(tx, input.id);
    const row = await lockLiveTask(tx, input.id);
    assertVersion(`Task ${row.id}`, row.version, ctx.expectedVersion);
    if (row.status !== 'in_review') {
      throw new BatonError('invalid_transition', `Task ${row.id} is ${row.status}; only work in review can be reviewed.`, {
        extra: { legal_transitions: [...TRANSITIONS[row.status as TaskStatus]], current_status: row.status },
      });
    }
    if (input.decision === 'approve') await checkNotOwnHandIn(tx, ctx, row);
    const comment = input.comment === undefined ? undefined : await postComment(tx, ctx, row, { body: input.comment, artifacts: [], pointer: '/comment' });
    let changes: TaskChanges;
    if (input.decision === 'approve') {
      // Approval never cancels subtasks: that takes tasks_update with cancel_children.
      await closeChildren(tx, ctx, row, false);
      await closeAsksOfEndedTask(tx, ctx, row, 'task_done');
      changes = { status: 'done', changes_requested_id: null };
      ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: 'in_review', to: 'done', reason: 'approved', ...(row.handoff ? { handed_in_by: row.handoff.by.id } : {}) } });
    } else {
      const assignee = row.assignee_id && row.assignee_kind ? { id: row.assignee_id, kind: row.assignee_kind } : undefined;
      const lease = await moveLease(tx, ctx, row, 'in_progress', assignee);
      const holder = { id: lease.changes.lease_holder_id ?? '', kind: lease.changes.lease_holder_kind ?? 'agent' };
      // The work goes back to one principal, who becomes its assignee if it had none, so a lapsed lease cannot hand it to another.
      changes = { status: 'in_progress', ...lease.changes, changes_requested_id: comment?.id ?? null, assignee_id: holder.id, assignee_kind: holder.kind };
      ctx.emit({ type: 'task.changes_requested', subject: row.id, data: { comment_id: comment?.id, to: holder } });
      if (!assignee) ctx.emit({ type: 'task.assigned', subject: row.id, data: { from: null, to: holder, reason: 'changes_requested' } });
      ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: 'in_review', to: 'in_progress', reason: 'changes_requested' } });
    }
    await closeToReview(tx, ctx, row.id);
    if (row.handoff && row.handoff.by.id !== ctx.actor.id) {
      const excerpt = input.decision === 'approve' ? 'approved' : `changes requested: ${input.comment?.slice(0, 180) ?? ''}`;
      await insertInboxItems(tx, [inboxItem(ctx.ids, ctx.now, { principal_id: row.handoff.by.id, kind: 'review', task_id: row.id, ref_id: row.id, by_id: ctx.actor.id, excerpt })]);
    }
    const updated = await updateTask(tx, row.id, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    return shapeTask(updated, ctx.actor, { view: 'full', at: ctx.now });
  },
});
