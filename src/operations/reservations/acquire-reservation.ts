import { z } from 'zod';
import { overlappingGlobs } from '../../domain/globs.ts';
import { BatonError } from '../../errors.ts';
import type { Tx } from '../../store/connection.ts';
import { findReservation, heldLease, insertReservation, lockReservationKey, nextEpoch, type ReservationRow, unendedReservations, updateReservation } from '../../store/reservations.ts';
import { taskId } from '../tasks/task-schema.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { pathGlob, repoParam, reservationOutput, resourceParam, stateOf, toReservation, ttlParam } from './reservation-schema.ts';

export const acquireReservation = defineOperation({
  name: 'reservations_acquire',
  summary: 'Reserve a named `resource`, or `paths` (globs) in a `repo`, for a while, so others do not touch it.',
  description: 'Taken by someone else: 409 reservation_conflict says who holds what until when. With `task_id` it ends with your lease on that task.',
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
  }),
  output: reservationOutput,
  async run(tx, ctx, input) {
    const target = targetOf(input);
    await lockReservationKey(tx, target.key);
    const now = ctx.now;
    const leaseId = input.task_id === undefined ? null : await leaseFor(tx, input.task_id, ctx);
    const holders = [];
    for (const row of await unendedReservations(tx, target.key)) {
      const state = stateOf(row, now);
      if (state !== 'active') {
        await reclaim(tx, ctx, row, state);
        continue;
      }
      if (row.mode === 'shared' && input.mode === 'shared') continue;
      const overlap = target.paths === null ? [] : overlappingGlobs(target.paths, row.paths ?? []);
      if (target.paths !== null && overlap.length === 0) continue;
      holders.push({
        reservation_id: row.id,
        holder: { id: row.holder_id, kind: row.holder_kind },
        mode: row.mode,
        ...(row.resource !== null ? { resource: row.resource } : { repo: row.repo, overlapping: overlap.map(([yours, theirs]) => ({ yours, theirs })) }),
        task_id: row.task_id,
        expires_at: row.expires_at.toISOString(),
      });
    }
    if (holders.length > 0) {
      const first = holders[0];
      throw new BatonError('reservation_conflict', `${target.label} is reserved (${first?.mode}) by ${first?.holder.kind} ${first?.holder.id} until ${first?.expires_at}.`, { extra: { holders } });
    }
    const id = ctx.ids.make('res');
    await insertReservation(tx, {
      id,
      lock_key: target.key,
      resource: input.resource ?? null,
      repo: input.repo ?? null,
      paths: target.paths,
      mode: input.mode,
      holder_id: ctx.actor.id,
      holder_kind: ctx.actor.kind,
      task_id: input.task_id ?? null,
      lease_id: leaseId,
      epoch: await nextEpoch(tx, target.key),
      ttl_s: input.ttl_s,
      acquired_at: now,
      renewed_at: now,
      expires_at: new Date(now.getTime() + input.ttl_s * 1000),
      ended_at: null,
      end_reason: null,
    });
    const row = await findReservation(tx, id);
    if (!row) throw new Error(`reservation ${id} vanished in its own transaction`);
    ctx.emit({ type: 'reservation.acquired', subject: id, data: { resource: row.resource, repo: row.repo, paths: row.paths, mode: row.mode, epoch: row.epoch, expires_at: row.expires_at.toISOString(), task_id: row.task_id } });
    return toReservation(row, now);
  },
});

function targetOf(input: { resource?: string | undefined; repo?: string | undefined; paths?: string[] | undefined }): { key: string; paths: string[] | null; label: string } {
  if (input.resource !== undefined && input.repo === undefined && input.paths === undefined) {
    return { key: `resource:${input.resource}`, paths: null, label: `Resource ${input.resource}` };
  }
  if (input.resource === undefined && input.repo !== undefined && input.paths !== undefined) {
    return { key: `repo:${input.repo}`, paths: [...new Set(input.paths)], label: `Paths in ${input.repo}` };
  }
  throw new BatonError('validation_failed', 'A reservation names a `resource`, or a `repo` with `paths`: one of the two.', {
    extra: { errors: [{ pointer: input.resource === undefined ? '/repo' : '/resource', detail: 'give resource, or repo with paths', location: 'body' }] },
  });
}

/** The caller's live lease on the task, which the reservation will end with. */
async function leaseFor(tx: Tx, id: string, ctx: OperationContext): Promise<string> {
  const lease = await heldLease(tx, id, ctx.actor.id, ctx.now);
  if (!lease) throw new BatonError('lease_inactive', `You hold no active lease on task ${id}; a reservation tied to a task needs one.`, { hint: 'Claim the task first ([[tasks_claim]]), or reserve without `task_id`.' });
  return lease.id;
}

/** Marks a lapsed reservation ended, so it no longer counts, and says so on the timeline. */
async function reclaim(tx: Tx, ctx: OperationContext, row: ReservationRow, state: 'expired' | 'lease_ended' | 'released'): Promise<void> {
  const reason = state === 'lease_ended' ? 'lease_ended' : 'expired';
  await updateReservation(tx, row.id, { ended_at: ctx.now, end_reason: reason });
  ctx.emit({ type: 'reservation.expired', subject: row.id, data: { reason, holder: { id: row.holder_id, kind: row.holder_kind }, epoch: row.epoch, expires_at: row.expires_at.toISOString() } });
}
