import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import type { Tx } from '../../store/connection.ts';
import { heldLease } from '../../store/reservations.ts';
import { taskId } from '../tasks/task-schema.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { LONG_POLL_MAX_S } from '../shared/long-poll.ts';
import { pathGlob, repoParam, reservationOutput, resourceParam, toReservation, ttlParam } from './reservation-schema.ts';
import { type Holder, holdersInTheWay, insertHeld, reservationConflict, targetOf } from './reserve.ts';

export const acquireReservation = defineOperation({
  name: 'reservations_acquire',
  summary: 'Reserve a named `resource`, or `paths` (globs) in a `repo`, for a while, so others do not touch it.',
  description: 'Taken: 409 reservation_conflict says who holds what until when (`wait_s`: wait for it first). With `task_id` it ends with your lease on that task.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/reservations', successStatus: 201 },
  input: z.strictObject({
    resource: resourceParam.optional(),
    repo: repoParam.optional(),
    paths: z.array(pathGlob).min(1).max(50).optional().describe("Globs in `repo`, e.g. ['src/**']."),
    mode: z.enum(['exclusive', 'shared']).default('exclusive'),
    ttl_s: ttlParam.default(300),
    task_id: taskId.optional(),
    wait_s: z.int().min(0).max(LONG_POLL_MAX_S).default(0),
  }),
  output: reservationOutput,
  waitsOut: {
    code: 'reservation_conflict',
    seconds: (input) => input.wait_s,
    retryAt: (error) => earliestExpiry(error),
  },
  async run(tx, ctx, input) {
    const target = targetOf(input);
    const holders = await holdersInTheWay(tx, ctx, target);
    const leaseId = input.task_id === undefined ? null : await leaseFor(tx, input.task_id, ctx);
    if (holders.length > 0) throw reservationConflict(target, holders);
    const row = await insertHeld(tx, ctx, target, { ttlS: input.ttl_s, taskId: input.task_id ?? null, leaseId });
    return toReservation(row, ctx.now);
  },
});

/** When the first holder in a conflict's way runs out, unless renewed: a waiter asks again then. */
function earliestExpiry(error: BatonError): Date | undefined {
  const holders = (error.extra as { holders?: Holder[] } | undefined)?.holders ?? [];
  const times = holders.map((h) => Date.parse(h.expires_at)).filter((t) => Number.isFinite(t));
  return times.length === 0 ? undefined : new Date(Math.min(...times));
}

/** The caller's live lease on the task, which the reservation will end with. */
async function leaseFor(tx: Tx, id: string, ctx: OperationContext): Promise<string> {
  const lease = await heldLease(tx, id, ctx.actor.id, ctx.now);
  if (!lease) throw new BatonError('lease_inactive', `You hold no active lease on task ${id}; a reservation tied to a task needs one.`, { hint: 'Claim the task first ([[tasks_claim]]), or reserve without `task_id`.' });
  return lease.id;
}
