import { z } from 'zod';
import { overlappingGlobs } from '../../domain/globs.ts';
import { BatonError } from '../../errors.ts';
import type { Tx } from '../../store/connection.ts';
import type { ReservationRequirement } from '../../store/schema.ts';
import type { TaskRow } from '../../store/tasks.ts';
import type { OperationContext } from '../define-operation.ts';
import { pathGlob } from './reservation-schema.ts';
import { holdersInTheWay, insertHeld, reservationConflict, type ReservationTarget, targetOf } from './reserve.ts';

/** How many reservations one task may require. */
const REQUIREMENTS_MAX = 10;

/**
 * `reservations` on tasks_create: what claiming the task takes with its lease (spec/collaboration.md,
 * "Reservations"). Each names a `resource`, or a `repo` with `paths`, and a `mode` (default
 * exclusive); one each per resource or repository. Kept short: it is in the agent's tools/list.
 */
export const reservationRequirements = z
  .array(
    z.strictObject({
      // Undescribed (reservations_acquire describes them): this schema is in every task write's tool.
      resource: z.string().trim().min(1).max(200).optional(),
      repo: z.string().trim().min(1).max(200).optional(),
      paths: z.array(pathGlob).min(1).max(50).optional(),
      mode: z.enum(['exclusive', 'shared']).optional(),
    }),
  )
  .max(REQUIREMENTS_MAX)
  .superRefine((list, check) => {
    const keys = new Set<string>();
    list.forEach((r, i) => {
      if ((r.resource === undefined) === (r.repo === undefined) || (r.repo === undefined) !== (r.paths === undefined)) {
        check.addIssue({ code: 'custom', path: [i], message: 'give resource, or repo with paths' });
        return;
      }
      const key = r.resource !== undefined ? `resource:${r.resource}` : `repo:${r.repo}`;
      if (keys.has(key)) check.addIssue({ code: 'custom', path: [i], message: 'one requirement per resource or repo' });
      keys.add(key);
    });
  })
  .describe('Taken with the lease, or no claim.');

/** A task's requirements as targets, in key order (so claims lock keys in one order). */
function targetsOf(requirements: readonly ReservationRequirement[]): ReservationTarget[] {
  return requirements.map((r) => targetOf({ ...r, mode: r.mode ?? 'exclusive' })).sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** Whether two requests of one claim would conflict with each other, as with a live holder. */
function conflicting(a: ReservationTarget, b: ReservationTarget): boolean {
  if (a.key !== b.key || (a.mode === 'shared' && b.mode === 'shared')) return false;
  return a.paths === null || overlappingGlobs(a.paths, b.paths ?? []).length > 0;
}

/**
 * Which of these tasks (in order) cannot be claimed by the caller now because a reservation one
 * requires is held by someone (or by an earlier of these tasks): task id → the conflict. Locks the
 * keys it looks at for the rest of the transaction, so what it found free stays free for the claim.
 * Each task comes with what it requires, read with it (the claim's pick), not read again here.
 */
export async function reservationRefusals(tx: Tx, ctx: OperationContext, tasks: readonly Pick<TaskRow, 'id' | 'reservations'>[]): Promise<Map<string, BatonError>> {
  const refused = new Map<string, BatonError>();
  const planned: ReservationTarget[] = [];
  for (const { id, reservations } of tasks) {
    const targets = targetsOf(reservations ?? []);
    for (const target of targets) {
      const holders = await holdersInTheWay(tx, ctx, target);
      if (holders.length > 0) {
        refused.set(id, reservationConflict(target, holders, `Task ${id} requires a reservation: `));
        break;
      }
      if (planned.some((p) => conflicting(p, target))) {
        refused.set(id, new BatonError('reservation_conflict', `Task ${id} requires ${target.label}, which another task of this claim takes.`, { extra: { holders: [] } }));
        break;
      }
    }
    if (!refused.has(id)) planned.push(...targets);
  }
  return refused;
}

/**
 * Takes, for each newly granted lease, the reservations its task requires (`requirements`, as its
 * grant returned the task), each ending with the lease (`follows_lease`); a requirement held by
 * someone throws `409 reservation_conflict` naming the holder, which rolls the claim back whole.
 * Called wherever leases are granted (claimTasks).
 */
export async function takeRequiredReservations(
  tx: Tx,
  ctx: OperationContext,
  leases: readonly { taskId: string; leaseId: string; ttlS: number; expiresAt: Date; requirements: readonly ReservationRequirement[] | null }[],
): Promise<void> {
  for (const lease of leases) {
    for (const target of targetsOf(lease.requirements ?? [])) {
      const holders = await holdersInTheWay(tx, ctx, target);
      if (holders.length > 0) throw reservationConflict(target, holders, `Task ${lease.taskId} requires a reservation: `);
      await insertHeld(tx, ctx, target, { ttlS: lease.ttlS, taskId: lease.taskId, leaseId: lease.leaseId, leaseExpiresAt: lease.expiresAt });
    }
  }
}
