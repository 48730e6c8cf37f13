import { z } from 'zod';
import { type TaskStatus, TRANSITIONS } from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import { lockTask, type TaskRow } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { claimOutput, claimTasks, expireSuperseded, lapsesOf, resolveTtl, ttlParam } from '../leases/grant.ts';
import { assertVersion } from '../shared/versions.ts';
import { admitClaims } from '../budgets/budget-spend.ts';
import { taskNotFound } from './get-task.ts';
import { taskId } from './task-schema.ts';

export const claimTask = defineOperation({
  name: 'tasks_claim',
  summary: 'Claim one task by id: it moves to in_progress under a lease held by you.',
  description:
    'A lapsed lease counts as a failed attempt first. Refusals (409): already_claimed, assigned_to_other, dependencies_pending, backoff_pending, budget_exhausted. The answer carries the `discussion`.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks/{id}/claim' },
  input: z.strictObject({ id: taskId, ttl_s: ttlParam }),
  output: claimOutput,
  version: (claimed) => claimed.task.version ?? 0,
  async run(tx, ctx, input) {
    const ttlS = resolveTtl(ctx, input.ttl_s);
    const task = await lockTask(tx, input.id);
    if (!task) throw taskNotFound(input.id);
    assertVersion(`Task ${task.id}`, task.version, ctx.expectedVersion);
    const leaseLive = task.lease_expires_at !== null && task.lease_expires_at > ctx.now;
    if (task.status === 'in_progress' && leaseLive) {
      const yours = task.lease_holder_id === ctx.actor.id;
      throw new BatonError(
        'already_claimed',
        yours
          ? `You already hold task ${task.id} (lease ${task.lease_id}) until ${task.lease_expires_at?.toISOString()}.`
          : `Task ${task.id} is held by ${task.lease_holder_kind} ${task.lease_holder_id} until ${task.lease_expires_at?.toISOString()}.`,
        {
          ...(yours ? { hint: `Keep working: send heartbeats with [[leases_heartbeat id=${task.lease_id}]].` } : {}),
          extra: { holder: { id: task.lease_holder_id, kind: task.lease_holder_kind }, lease_id: yours ? task.lease_id : undefined, lease_expires_at: task.lease_expires_at?.toISOString() },
        },
      );
    }
    if (task.assignee_id !== null && task.assignee_id !== ctx.actor.id) {
      throw new BatonError('assigned_to_other', `Task ${task.id} is assigned to ${task.assignee_kind} ${task.assignee_id}, not you.`, {
        extra: { assignee: { id: task.assignee_id, kind: task.assignee_kind } },
      });
    }
    if (task.status !== 'todo' && task.status !== 'in_progress') {
      throw new BatonError('invalid_transition', `Task ${task.id} is ${task.status}; only todo tasks can be claimed.`, {
        extra: { legal_transitions: [...TRANSITIONS[task.status as TaskStatus]], current_status: task.status },
        hint: 'Claim a todo task instead: [[tasks_claim_next]] takes the next one.',
      });
    }
    // A lapsed lease is counted first, as the sweeper counts it; a claim it leaves in back-off or the
    // dead-letter is refused, and the refusal, rolled back, leaves the counting to the sweeper.
    const lapse = task.status === 'in_progress' ? (await lapsesOf(tx, ctx, [task.id]))[0] : undefined;
    if (lapse?.changes.status === 'blocked') throw lapseExhausted(task, lapse.changes.attempts);
    const notBefore = lapse ? lapse.changes.not_before : task.not_before;
    if (notBefore !== null && notBefore > ctx.now) {
      const waitS = Math.ceil((notBefore.getTime() - ctx.now.getTime()) / 1000);
      // A task that never failed an attempt waits out the not_before it was given: a schedule.
      const why = lapse ? `'s lease lapsed at ${task.lease_expires_at?.toISOString()}, failed attempt ${lapse.changes.attempts}, so it is` : task.attempts === 0 ? ' is scheduled:' : ' failed its last attempt and is';
      throw new BatonError('backoff_pending', `Task ${task.id}${why} not claimable before ${notBefore.toISOString()}.`, {
        extra: { not_before: notBefore.toISOString(), attempts: lapse?.changes.attempts ?? task.attempts },
        headers: { 'retry-after': String(waitS) },
      });
    }
    if (task.waiting_on.length > 0) {
      throw new BatonError('dependencies_pending', `Task ${task.id} waits on ${task.waiting_on.join(', ')}.`, { extra: { waiting_on: task.waiting_on } });
    }
    const { refused } = await admitClaims(tx, ctx, [task]);
    if (refused[0]) throw refused[0];
    if (lapse) await expireSuperseded(tx, ctx, [lapse]);
    const [claimed] = await claimTasks(tx, ctx, [task], ttlS);
    if (!claimed) throw new Error('claim returned nothing');
    return claimed;
  },
});

/** A claim refused because the lapsed lease it would supersede used the task's last attempt. */
function lapseExhausted(task: TaskRow, attempts: number): BatonError {
  return new BatonError(
    'invalid_transition',
    `Task ${task.id}'s lease lapsed at ${task.lease_expires_at?.toISOString()}, failed attempt ${attempts}, its last: the task leaves the queue (blocked, attempts_exhausted).`,
    {
      extra: { legal_transitions: [...TRANSITIONS.blocked], current_status: 'blocked' },
      hint: `A human requeues a dead-lettered task: [[tasks_requeue id=${task.id}]]. Claim other work with [[tasks_claim_next]].`,
    },
  );
}
