import { z } from 'zod';
import { NO_LEASE, updateTask } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { shapeTask } from '../tasks/task-view.ts';
import { taskOutput } from '../tasks/task-schema.ts';
import { lockLiveLease } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';

export const releaseLease = defineOperation({
  name: 'leases.release',
  summary: 'Give a task back unfinished: the lease ends and the task returns to todo for anyone to claim.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  http: { method: 'POST', path: '/leases/{id}/release' },
  input: z.strictObject({
    id: leaseId,
    note: z.string().trim().min(1).max(500, 'notes are limited to 500 characters').optional().describe('Why, for the next claimer.'),
  }),
  output: z.object({ task: taskOutput, lease: leaseOutput }),
  async run(tx, ctx, input) {
    const { lease, task } = await lockLiveLease(tx, input.id, ctx.actor, ctx.now, true);
    const updated = await updateTask(
      tx,
      task.id,
      { status: 'todo', ...NO_LEASE, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind },
      { id: lease.id, state: 'released' },
    );
    const ended = { ...lease, state: 'released' as const, ended_at: ctx.now };
    ctx.emit({ type: 'lease.released', subject: task.id, data: { lease_id: lease.id, ...(input.note ? { note: input.note } : {}) } });
    ctx.emit({ type: 'task.status_changed', subject: task.id, data: { from: 'in_progress', to: 'todo', reason: 'released' } });
    return { task: shapeTask(updated, ctx.actor, { view: 'compact' }), lease: toLease(ended, ctx.now) };
  },
});
