import { closeAsksOfEndedTask } from '../asks/ask-flow.ts';
import { z } from 'zod';
import { findTask, lockTask, NO_LEASE, updateTask } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { taskNotFound } from './get-task.ts';
import { shapeTask } from './task-view.ts';
import { taskId, fullTaskOutput } from './task-schema.ts';

export const deleteTask = defineOperation({
  name: 'tasks_delete',
  summary: 'Delete a task (destructive: needs a human\'s approval unless a human with approvals:decide asks).',
  description:
    'It leaves reads and lists (a `since` delta shows its tombstone); its events stay; a lease on it ends. An agent gets 202, a pending approval.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'destructive',
  http: { method: 'DELETE', path: '/tasks/{id}' },
  input: z.strictObject({ id: taskId }),
  output: fullTaskOutput,
  async approvalTarget(db, input) {
    const task = await findTask(db, input.id);
    if (!task) throw taskNotFound(input.id);
    return { id: task.id, version: task.version };
  },
  async run(tx, ctx, input) {
    const task = await lockTask(tx, input.id);
    if (!task) throw taskNotFound(input.id);
    assertVersion(`Task ${task.id}`, task.version, ctx.expectedVersion);
    if (task.lease_id) ctx.emit({ type: 'lease.released', subject: task.id, data: { lease_id: task.lease_id, reason: 'task_deleted' } });
    await closeAsksOfEndedTask(tx, ctx, task, 'task_deleted');
    const deleted = await updateTask(
      tx,
      task.id,
      { deleted_at: ctx.now, ...NO_LEASE, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind },
      task.lease_id ? { id: task.lease_id, state: 'ended', failure_code: 'cancelled' } : undefined,
    );
    ctx.emit({ type: 'task.deleted', subject: task.id, data: { title: task.title, status: task.status } });
    return shapeTask(deleted, ctx.actor, { view: 'full', at: ctx.now });
  },
});
