import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import type { LeaseRow } from '../../store/leases.ts';
import type { TaskRow } from '../../store/tasks.ts';
import type { Tx } from '../../store/connection.ts';
import { failureCodeInput } from '../shared/failure-code.ts';
import { artifactId } from '../artifacts/artifact-schema.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { recordHandIn } from '../tasks/hand-in-task.ts';
import { claimFilter, claimNext, claimNextOutput } from '../tasks/claim-next-task.ts';
import { HANDOFF_SUMMARY_MAX, taskOutput, taskView } from '../tasks/task-schema.ts';
import { shapeTask } from '../tasks/task-view.ts';
import { ttlParam } from './grant.ts';
import { lockLiveLease } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';
import { releaseHeld } from './release-lease.ts';

/** How a work cycle ends one lease: handed in for review (with a summary) or a failed attempt (with a reason). */
export const leaseEnding = {
  id: leaseId,
  outcome: z.enum(['handed_in', 'failed']).default('handed_in').describe('`failed` needs `reason` (counted), `handed_in` `summary`.'),
  summary: z
    .string()
    .trim()
    .min(1, 'summary must not be empty')
    .max(HANDOFF_SUMMARY_MAX, `summary is limited to ${HANDOFF_SUMMARY_MAX} characters; put the long form in an artifact`)
    .optional(),
  artifacts: z
    .array(artifactId)
    .max(20, 'at most 20 artifacts')
    .refine((ids) => new Set(ids).size === ids.length, 'artifacts must not repeat')
    .default([]),
  reason: z.string().trim().min(1).max(500, 'reasons are limited to 500 characters').optional(),
  failure_code: failureCodeInput.optional(),
};
export type LeaseEnding = z.output<z.ZodObject<typeof leaseEnding>>;

/** The ended task's fields in a cycle's answer: enough to see where it went, not the whole task again. */
const ENDED_FIELDS = ['id', 'title', 'status', 'version', 'attempts', 'not_before', 'blocked_reason'] as const;
/** One ended lease in a cycle's answer: the task as it is now, and the lease as it ended. */
export const endedOutput = z.object({ task: taskOutput, lease: leaseOutput });
/** `endedOutput` as every cycle answers it: its task's ENDED_FIELDS each present (the OpenAPI document's `EndedLease`). */
export const endedLeaseView = z.object({ task: taskView(ENDED_FIELDS), lease: leaseOutput });

/** Refuses an ending without what its outcome needs (or with what it cannot take); `at` is its JSON pointer. */
export function checkEnding(ending: LeaseEnding, at: string): void {
  const wrong = (field: string, detail: string) =>
    new BatonError('validation_failed', `${`${at}/${field}`.slice(1)}: ${detail}.`, { extra: { errors: [{ pointer: `${at}/${field}`, detail, location: 'body' }] } });
  if (ending.outcome === 'handed_in' && ending.summary === undefined) throw wrong('summary', 'required with outcome handed_in');
  if (ending.outcome === 'handed_in' && ending.reason !== undefined) throw wrong('reason', 'only with outcome failed');
  if (ending.outcome === 'handed_in' && ending.failure_code !== undefined) throw wrong('failure_code', 'only with outcome failed');
  if (ending.outcome === 'failed' && ending.reason === undefined) throw wrong('reason', 'required with outcome failed');
  if (ending.outcome === 'failed' && (ending.summary !== undefined || ending.artifacts.length > 0)) throw wrong('summary', 'summary and artifacts go with outcome handed_in');
}

/** A lease as a cycle ended it, and its task as it is now. */
export function endedView(ctx: OperationContext, lease: LeaseRow, task: TaskRow, outcome: LeaseEnding['outcome']): z.output<typeof endedOutput> {
  const state = outcome === 'handed_in' ? ('ended' as const) : ('released' as const);
  return { task: shapeTask(task, ctx.actor, { view: 'compact', fields: ENDED_FIELDS, at: ctx.now }), lease: toLease({ ...lease, state, ended_at: ctx.now }, ctx.now) };
}

/** Ends a held lease, its task locked and the lease checked live: hands the task in or fails the attempt. */
export async function endLease(tx: Tx, ctx: OperationContext, held: { lease: LeaseRow; task: TaskRow }, ending: LeaseEnding, at: string): Promise<z.output<typeof endedOutput>> {
  const updated =
    ending.outcome === 'handed_in'
      ? await recordHandIn(tx, ctx, held.task, { summary: ending.summary ?? '', artifacts: ending.artifacts }, `${at}/artifacts`)
      : await releaseHeld(tx, ctx, held, { outcome: 'failed', reason: ending.reason, failure_code: ending.failure_code });
  return endedView(ctx, held.lease, updated, ending.outcome);
}

export const cycleLease = defineOperation({
  name: 'leases_cycle',
  summary: 'One call per work cycle: hand in (or fail) your lease\'s task and claim the next matching one, in one transaction.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/cycle' },
  input: z.strictObject({ ...leaseEnding, ...claimFilter, ttl_s: ttlParam }),
  output: z.object({ ended: endedOutput, ...claimNextOutput }),
  genericPlans: () => true,
  async run(tx, ctx, input) {
    checkEnding(input, '');
    const held = await lockLiveLease(tx, input.id, ctx.actor, ctx, false);
    const ended = await endLease(tx, ctx, held, input, '');
    const next = await claimNext(tx, ctx, { ...input, limit: 1 }, input.outcome === 'failed' ? [held.task.id] : []);
    return { ended, ...next };
  },
});
