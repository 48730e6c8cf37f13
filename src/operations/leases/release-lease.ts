import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import type { LeaseRow } from '../../store/leases.ts';
import type { Tx } from '../../store/connection.ts';
import { NO_LEASE, type TaskRow, updateTask } from '../../store/tasks.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { failureCodeInput } from '../shared/failure-code.ts';
import { failedAttempt } from '../tasks/attempts.ts';
import { shapeTask } from '../tasks/task-view.ts';
import { compactTaskOutput } from '../tasks/task-schema.ts';
import { lockLiveLease } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';

export const releaseLease = defineOperation({
  name: 'leases_release',
  summary: 'Give a task back unfinished: the lease ends and the task returns to todo for anyone to claim.',
  description:
    '`outcome: "failed"` with a `reason` counts a failed attempt: the task backs off (`not_before`), or, its attempts exhausted, is dead-lettered (blocked, `attempts_exhausted`).',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/release' },
  input: z.strictObject({
    id: leaseId,
    note: z.string().trim().min(1).max(500, 'notes are limited to 500 characters').optional().describe('Why, for the next claimer.'),
    outcome: z.enum(['released', 'failed']).default('released').describe('`failed`: the attempt failed (counted; needs `reason`). `released`: handed back, not counted.'),
    reason: z.string().trim().min(1).max(500, 'reasons are limited to 500 characters').optional().describe('Required with outcome failed: what went wrong.'),
    failure_code: failureCodeInput.optional(),
  }),
  output: z.object({ task: compactTaskOutput, lease: leaseOutput }),
  async run(tx, ctx, input) {
    if (input.outcome === 'failed' && input.reason === undefined) {
      throw new BatonError('validation_failed', 'A release with outcome failed needs a reason.', {
        extra: { errors: [{ pointer: '/reason', detail: 'required with outcome failed', location: 'body' }] },
      });
    }
    if (input.outcome !== 'failed' && input.failure_code !== undefined) {
      throw new BatonError('validation_failed', 'A failure_code goes with outcome failed.', {
        extra: { errors: [{ pointer: '/failure_code', detail: 'only with outcome failed', location: 'body' }] },
      });
    }
    const { lease, task } = await lockLiveLease(tx, input.id, ctx.actor, ctx, true);
    const updated = await releaseHeld(tx, ctx, { lease, task }, input);
    const ended = { ...lease, state: 'released' as const, ended_at: ctx.now };
    return { task: shapeTask(updated, ctx.actor, { view: 'compact', at: ctx.now }), lease: toLease(ended, ctx.now) };
  },
});

/**
 * Ends a held lease (locked task first, checked live) and returns its task to todo; with outcome
 * `failed`, counts the failed attempt (back-off, or out of the queue when exhausted). Emits
 * lease.released and the attempt's events, or task.status_changed.
 */
export async function releaseHeld(
  tx: Tx,
  ctx: OperationContext,
  { lease, task }: { lease: LeaseRow; task: TaskRow },
  how: { outcome: 'released' | 'failed'; reason?: string | undefined; failure_code?: string | undefined; note?: string | undefined },
): Promise<TaskRow> {
  const code = how.failure_code ?? 'unspecified';
  const failed = how.outcome === 'failed' ? failedAttempt(task, { kind: 'failed', code, reason: how.reason ?? null, lease_id: lease.id, holder_id: lease.holder_id }, ctx) : undefined;
  const updated = await updateTask(
    tx,
    task.id,
    { status: 'todo', ...failed?.changes, ...NO_LEASE, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind },
    { id: lease.id, state: 'released', failure_code: failed ? code : undefined },
  );
  ctx.emit({ type: 'lease.released', subject: task.id, data: { lease_id: lease.id, ...(how.note ? { note: how.note } : {}), ...(failed ? { outcome: 'failed' } : {}) } });
  if (failed) for (const event of failed.events) ctx.emit(event);
  else ctx.emit({ type: 'task.status_changed', subject: task.id, data: { from: 'in_progress', to: 'todo', reason: 'released' } });
  return updated;
}
