import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { updateTask } from '../../store/tasks.ts';
import { lockLiveTask } from '../comments/comment-access.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { shapeTask } from './task-view.ts';
import { taskId, fullTaskOutput } from './task-schema.ts';

export const requeueTask = defineOperation({
  name: 'tasks_requeue',
  summary: 'Put a dead-lettered task (attempts exhausted) back in the queue with its attempts reset: one action, for a human.',
  description: 'The task returns to todo, claimable at once, with `attempts` 0; its `failures` stay.',
  kind: 'write',
  scope: 'tasks:write',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/tasks/{id}/requeue' },
  input: z.strictObject({ id: taskId }),
  output: fullTaskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Only a human may requeue a task whose attempts are exhausted.');
    const row = await lockLiveTask(tx, input.id);
    assertVersion(`Task ${row.id}`, row.version, ctx.expectedVersion);
    if (row.blocked_reason !== 'attempts_exhausted') {
      throw new BatonError('not_dead_lettered', `Task ${row.id} is ${row.status} and has not exhausted its attempts (${row.attempts} so far).`, {
        extra: { status: row.status, attempts: row.attempts },
      });
    }
    const updated = await updateTask(tx, row.id, {
      status: 'todo',
      attempts: 0,
      not_before: null,
      blocked_reason: null,
      updated_at: ctx.now,
      updated_by_id: ctx.actor.id,
      updated_by_kind: ctx.actor.kind,
    });
    ctx.emit({ type: 'task.requeued', subject: row.id, data: { attempts_before: row.attempts } });
    ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: row.status, to: 'todo', reason: 'requeued' } });
    return shapeTask(updated, ctx.actor, { view: 'full', at: ctx.now });
  },
});
