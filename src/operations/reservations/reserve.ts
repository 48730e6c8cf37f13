import { overlappingGlobs } from '../../domain/globs.ts';
import { BatonError } from '../../errors.ts';
import type { Tx } from '../../store/connection.ts';
import { findReservation, insertReservation, lockReservationKey, nextEpoch, type ReservationRow, unendedReservations, updateReservation } from '../../store/reservations.ts';
import type { OperationContext } from '../define-operation.ts';
import { expiryOf, stateOf } from './reservation-schema.ts';

/** What one reservation asks for: a resource, or globs in a repository, and how. */
export interface ReservationTarget {
  /** The advisory lock's key: `resource:<name>` or `repo:<key>`. */
  key: string;
  resource: string | null;
  repo: string | null;
  paths: string[] | null;
  mode: 'exclusive' | 'shared';
  /** How a conflict names it: `Resource build`, `Paths in github.com/acme/api`. */
  label: string;
}

/** A live reservation in the way of a request, as a conflict reports it. */
export interface Holder {
  reservation_id: string;
  holder: { id: string; kind: string };
  mode: string;
  resource?: string;
  repo?: string | null;
  overlapping?: { yours: string; theirs: string }[];
  task_id: string | null;
  expires_at: string;
}

/** The target of a request naming a `resource`, or a `repo` with `paths`; anything else is refused. */
export function targetOf(input: { resource?: string | undefined; repo?: string | undefined; paths?: string[] | undefined; mode: 'exclusive' | 'shared' }, pointer = ''): ReservationTarget {
  if (input.resource !== undefined && input.repo === undefined && input.paths === undefined) {
    return { key: `resource:${input.resource}`, resource: input.resource, repo: null, paths: null, mode: input.mode, label: `Resource ${input.resource}` };
  }
  if (input.resource === undefined && input.repo !== undefined && input.paths !== undefined) {
    return { key: `repo:${input.repo}`, resource: null, repo: input.repo, paths: [...new Set(input.paths)], mode: input.mode, label: `Paths in ${input.repo}` };
  }
  throw new BatonError('validation_failed', 'A reservation names a `resource`, or a `repo` with `paths`: one of the two.', {
    extra: { errors: [{ pointer: `${pointer}${input.resource === undefined ? '/repo' : '/resource'}`, detail: 'give resource, or repo with paths', location: 'body' }] },
  });
}

/**
 * Locks the target's key for the rest of the transaction, marks the lapsed reservations on it ended
 * (with their events), and answers the live ones in its way. Under the lock, an insert that follows
 * an empty answer cannot overlap anyone's.
 */
export async function holdersInTheWay(tx: Tx, ctx: OperationContext, target: ReservationTarget): Promise<Holder[]> {
  await lockReservationKey(tx, target.key);
  const now = ctx.now;
  const holders: Holder[] = [];
  for (const row of await unendedReservations(tx, target.key)) {
    const state = stateOf(row, now);
    if (state !== 'active') {
      await reclaim(tx, ctx, row, state);
      continue;
    }
    if (row.mode === 'shared' && target.mode === 'shared') continue;
    const overlap = target.paths === null ? [] : overlappingGlobs(target.paths, row.paths ?? []);
    if (target.paths !== null && overlap.length === 0) continue;
    holders.push({
      reservation_id: row.id,
      holder: { id: row.holder_id, kind: row.holder_kind },
      mode: row.mode,
      ...(row.resource !== null ? { resource: row.resource } : { repo: row.repo, overlapping: overlap.map(([yours, theirs]) => ({ yours, theirs })) }),
      task_id: row.task_id,
      expires_at: expiryOf(row).toISOString(),
    });
  }
  return holders;
}

/** `409 reservation_conflict` naming who holds what until when; `prefix` says what the request was for. */
export function reservationConflict(target: ReservationTarget, holders: readonly Holder[], prefix = ''): BatonError {
  const first = holders[0];
  const verb = target.paths === null ? 'is' : 'are';
  return new BatonError('reservation_conflict', `${prefix}${target.label} ${verb} reserved (${first?.mode}) by ${first?.holder.kind} ${first?.holder.id} until ${first?.expires_at}.`, { extra: { holders } });
}

/**
 * How a new reservation lasts: `ttlS` from now; or, when `leaseExpiresAt` is given (taken by a claim,
 * with `leaseId`), exactly as long as that lease, whatever its heartbeats.
 */
export interface Tenure {
  ttlS: number;
  taskId: string | null;
  leaseId: string | null;
  leaseExpiresAt?: Date;
}

/** Inserts a reservation of `target` for the caller (the key locked, nothing in the way) and emits `reservation.acquired`. */
export async function insertHeld(tx: Tx, ctx: OperationContext, target: ReservationTarget, tenure: Tenure): Promise<ReservationRow> {
  const now = ctx.now;
  const id = ctx.ids.make('res');
  await insertReservation(tx, {
    id,
    lock_key: target.key,
    resource: target.resource,
    repo: target.repo,
    paths: target.paths,
    mode: target.mode,
    holder_id: ctx.actor.id,
    holder_kind: ctx.actor.kind,
    task_id: tenure.taskId,
    lease_id: tenure.leaseId,
    epoch: await nextEpoch(tx, target.key),
    ttl_s: tenure.ttlS,
    acquired_at: now,
    renewed_at: now,
    expires_at: tenure.leaseExpiresAt ?? new Date(now.getTime() + tenure.ttlS * 1000),
    ended_at: null,
    end_reason: null,
    follows_lease: tenure.leaseExpiresAt !== undefined,
  });
  const row = await findReservation(tx, id);
  if (!row) throw new Error(`reservation ${id} vanished in its own transaction`);
  ctx.emit({ type: 'reservation.acquired', subject: id, data: { resource: row.resource, repo: row.repo, paths: row.paths, mode: row.mode, epoch: row.epoch, expires_at: row.expires_at.toISOString(), task_id: row.task_id } });
  return row;
}

/** Marks a lapsed reservation ended, so it no longer counts, and says so on the timeline. */
async function reclaim(tx: Tx, ctx: OperationContext, row: ReservationRow, state: 'expired' | 'lease_ended' | 'released'): Promise<void> {
  const reason = state === 'lease_ended' ? 'lease_ended' : 'expired';
  await updateReservation(tx, row.id, { ended_at: ctx.now, end_reason: reason });
  ctx.emit({ type: 'reservation.expired', subject: row.id, data: { reason, holder: { id: row.holder_id, kind: row.holder_kind }, epoch: row.epoch, expires_at: row.expires_at.toISOString() } });
}
