import { insertInboxItems } from '../../store/inbox.ts';
import { inboxItem } from '../asks/ask-flow.ts';
import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { NO_LEASE, type TaskChanges, type TaskRow, updateTask } from '../../store/tasks.ts';
import type { Principal } from '../../domain/principal.ts';
import { lockLiveTask, postComment } from '../comments/comment-access.ts';
import { commentBody } from '../comments/comment-schema.ts';
import { defineOperation } from '../define-operation.ts';
import { type PrincipalRef, resolveAssignee } from '../shared/principals.ts';
import { assertVersion } from '../shared/versions.ts';
import { shapeTask } from './task-view.ts';
import { assigneeParam, taskId, fullTaskOutput } from './task-schema.ts';
import type { LeaseEnding } from '../../store/tasks.ts';
import { actsOnAnyTask, assignedToOther, notYourTask } from './task-access.ts';

export const assignTask = defineOperation({
  name: 'tasks_assign',
  summary: 'Set or clear who a task is for; optionally with a comment to them.',
  description:
    'Only the assignee claims an assigned task. Held under another\'s live lease: 409 assignee_lease_held, unless `release_lease: true` ends it (back to todo). Agents: only unassigned tasks or their own (403 not_your_task).',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  http: { method: 'POST', path: '/tasks/{id}/assign' },
  input: z.strictObject({
    id: taskId,
    assignee: assigneeParam.nullable().describe('The principal the task is for (`agt_…`), or null to unassign.'),
    release_lease: z.boolean().default(false).describe("End another's lease on the task (it returns to todo)."),
    comment: commentBody.optional().describe('A comment posted with the assignment (mentions work as in comments_create).'),
  }),
  output: fullTaskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    const row = await lockLiveTask(tx, input.id);
    assertVersion(`Task ${row.id}`, row.version, ctx.expectedVersion);
    const to: PrincipalRef | null = input.assignee === null ? null : await resolveAssignee(tx, input.assignee);
    if (input.comment !== undefined) await postComment(tx, ctx, row, { body: input.comment, artifacts: [], pointer: '/comment' });
    if ((to?.id ?? null) === row.assignee_id) return shapeTask(row, ctx.actor, { view: 'full', at: ctx.now });

    const held = row.status === 'in_progress' && row.lease_id !== null && row.lease_expires_at !== null && row.lease_expires_at > ctx.now;
    const endsLease = held && to !== null && row.lease_holder_id !== to.id;
    checkTakesOnlyOwnWork(row, ctx.actor, endsLease);
    let changes: TaskChanges = { assignee_id: to?.id ?? null, assignee_kind: to?.kind ?? null };
    let ending: LeaseEnding | undefined;
    if (endsLease) {
      if (!input.release_lease) {
        throw new BatonError('assignee_lease_held', `Task ${row.id} is held by ${row.lease_holder_kind} ${row.lease_holder_id} until ${row.lease_expires_at?.toISOString()}.`, {
          extra: { holder: { id: row.lease_holder_id, kind: row.lease_holder_kind }, lease_id: row.lease_id },
        });
      }
      changes = { ...changes, status: 'todo', ...NO_LEASE };
      ending = { id: row.lease_id ?? '', state: 'released' };
      ctx.emit({ type: 'lease.released', subject: row.id, data: { lease_id: row.lease_id, holder_id: row.lease_holder_id, reason: 'reassigned' } });
      ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: 'in_progress', to: 'todo', reason: 'reassigned' } });
    }
    const updated = await updateTask(tx, row.id, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind }, ending);
    if (to && to.id !== ctx.actor.id) {
      await insertInboxItems(tx, [inboxItem(ctx.ids, ctx.now, { principal_id: to.id, kind: 'assigned', task_id: row.id, ref_id: row.id, by_id: ctx.actor.id, excerpt: row.title.slice(0, 200) })]);
    }
    ctx.emit({
      type: 'task.assigned',
      subject: row.id,
      data: { from: row.assignee_id ? { id: row.assignee_id, kind: row.assignee_kind } : null, to: to ? { id: to.id, kind: to.kind } : null },
    });
    return shapeTask(updated, ctx.actor, { view: 'full', at: ctx.now });
  },
});

/**
 * Assignment between agents is not advisory: an agent (without `agents:admin`) may change the
 * assignment only of an unassigned task or its own, and may not end a lease someone else holds,
 * with or without `release_lease`. Taking someone else's work is for humans (spec/collaboration.md, "Assignment").
 */
function checkTakesOnlyOwnWork(row: TaskRow, actor: Principal, endsLease: boolean): void {
  if (actsOnAnyTask(actor)) return;
  if (assignedToOther(row, actor)) throw notYourTask(row, 'an agent may change the assignment only of an unassigned task or its own');
  if (endsLease && row.lease_holder_id !== actor.id) {
    throw new BatonError('not_your_task', `Task ${row.id} is held by ${row.lease_holder_kind} ${row.lease_holder_id} until ${row.lease_expires_at?.toISOString()}; an agent may not end another's lease.`, {
      extra: { holder: { id: row.lease_holder_id, kind: row.lease_holder_kind } },
    });
  }
}
