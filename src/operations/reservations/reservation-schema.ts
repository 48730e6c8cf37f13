import { z } from 'zod';
import type { Principal } from '../../domain/principal.ts';
import { globProblem } from '../../domain/globs.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import type { Tx } from '../../store/connection.ts';
import { findReservation, lockReservationKey, type ReservationRow } from '../../store/reservations.ts';
import { holderRef } from '../tasks/task-schema.ts';

export const reservationId = z.string().regex(new RegExp(idPattern('res')), 'must be a reservation id: res_ followed by a 26-character ULID');
export const resourceParam = z.string().trim().min(1).max(200).describe("A named resource, e.g. 'staging-db'.");
export const repoParam = z.string().trim().min(1).max(200).describe("A repository key, e.g. 'github.com/acme/api'; with `paths`.");
export const pathGlob = z.string().min(1).max(300).superRefine((glob, check) => {
  const problem = globProblem(glob);
  if (problem) check.addIssue({ code: 'custom', message: problem });
});
export const ttlParam = z.int().min(30).max(3600).describe('Seconds, 30–3600 (default 300).');
export const epochParam = z.int().min(1).optional().describe('Your epoch, to be refused if it is stale.');

export const RESERVATION_STATES = ['active', 'released', 'expired', 'lease_ended'] as const;
export type ReservationState = (typeof RESERVATION_STATES)[number];

export const reservationOutput = z.object({
  id: z.string(),
  resource: z.string().nullable(),
  repo: z.string().nullable(),
  paths: z.array(z.string()).max(50).nullable(),
  mode: z.enum(['exclusive', 'shared']),
  holder: holderRef,
  task_id: z.string().nullable(),
  epoch: z.int(),
  ttl_s: z.int(),
  state: z.enum(RESERVATION_STATES),
  acquired_at: z.iso.datetime(),
  expires_at: z.iso.datetime(),
  ended_at: z.iso.datetime().nullable(),
});
export type Reservation = z.infer<typeof reservationOutput>;

/** Where a reservation stands at `now`: ended, run out, ended with its task lease, or active. */
export function stateOf(row: ReservationRow, now: Date): ReservationState {
  if (row.end_reason) return row.end_reason;
  if (row.expires_at <= now && !row.follows_lease) return 'expired';
  if (row.lease_id !== null && (row.lease_state !== 'active' || row.lease_expires_at === null || row.lease_expires_at <= now)) return 'lease_ended';
  return 'active';
}

/** Until when a reservation holds, unless renewed: its own expiry, or its lease's when it follows the lease. */
export function expiryOf(row: ReservationRow): Date {
  return row.follows_lease && row.lease_expires_at !== null ? row.lease_expires_at : row.expires_at;
}

export function toReservation(row: ReservationRow, now: Date): Reservation {
  return {
    id: row.id,
    resource: row.resource,
    repo: row.repo,
    paths: row.paths,
    mode: row.mode,
    holder: { id: row.holder_id, kind: row.holder_kind as Reservation['holder']['kind'] },
    task_id: row.task_id,
    epoch: row.epoch,
    ttl_s: row.ttl_s,
    state: stateOf(row, now),
    acquired_at: row.acquired_at.toISOString(),
    expires_at: expiryOf(row).toISOString(),
    ended_at: row.ended_at?.toISOString() ?? null,
  };
}

export function reservationNotFound(id: string): BatonError {
  return new BatonError('not_found', `No reservation ${id}.`, { hint: '[[reservations_list]] lists who holds what.' });
}

/**
 * Locks a reservation's key, then reads it, and checks that `actor` may act on it (`others`: whether
 * a human or an agents:admin may too) and that it is still live in `epoch`. The lock makes a
 * renewal or release and a rival's reclaim of a lapsed reservation take turns.
 */
export async function lockLiveReservation(tx: Tx, input: { id: string; epoch?: number | undefined }, actor: Principal, others: boolean): Promise<ReservationRow> {
  const found = await findReservation(tx, input.id);
  if (!found) throw reservationNotFound(input.id);
  await lockReservationKey(tx, found.lock_key);
  const row = (await findReservation(tx, input.id)) ?? found;
  const mine = row.holder_id === actor.id;
  if (!mine && !(others && (actor.kind === 'human' || actor.scopes.has('agents:admin')))) {
    throw new BatonError('not_reservation_holder', `Reservation ${row.id} is held by ${row.holder_kind} ${row.holder_id}.`);
  }
  return row;
}

/** Refuses a reservation that is no longer live at `now`, or whose epoch is not the caller's. */
export function assertLive(row: ReservationRow, epoch: number | undefined, now: Date): void {
  const state = stateOf(row, now);
  if (state !== 'active') throw new BatonError('reservation_lapsed', `Reservation ${row.id} (epoch ${row.epoch}) is ${state}.`, { extra: { state, epoch: row.epoch } });
  if (epoch !== undefined && epoch !== row.epoch) {
    throw new BatonError('reservation_lapsed', `Reservation ${row.id} is at epoch ${row.epoch}, not ${epoch}: your epoch is stale.`, { extra: { state, epoch: row.epoch } });
  }
}
