/**
 * Load shedding at the door (issue 44; spec/api.md, "When Baton is busy"). When more calls wait
 * for a database connection than the pool serves promptly, a new call is refused at once with 503
 * `unavailable` and `Retry-After`, before authentication spends a statement on it, instead of
 * waiting out BATON_DB_CONNECT_TIMEOUT_MS and failing anyway. Claims are refused first: they start
 * new work and are the costliest call. A lease's heartbeat is never refused here: a lease that
 * lapses because its renewal was turned away costs a failed attempt and a new claim.
 */
import { BatonError } from '../errors.ts';
import { heartbeatLease } from '../operations/leases/heartbeat-lease.ts';
import { heartbeatReservation } from '../operations/reservations/heartbeat-reservation.ts';
import { claimNextTask } from '../operations/tasks/claim-next-task.ts';
import { claimTask } from '../operations/tasks/claim-task.ts';

/** Calls waiting per pooled connection at which new claims are refused (at least `CLAIMS_SHED_FLOOR`). */
export const CLAIMS_SHED_AT = 4;
/** Calls waiting per pooled connection at which every call but a renewal is refused (at least `OTHERS_SHED_FLOOR`). */
export const OTHERS_SHED_AT = 16;
/**
 * The marks never fall below the default pool's (10 connections): on a pool of one or two, the
 * workers' own passes (sweeps, deliveries, notifications) queue a few calls without the instance
 * being busy.
 */
export const CLAIMS_SHED_FLOOR = 40;
export const OTHERS_SHED_FLOOR = 160;

const CLAIMS: ReadonlySet<string> = new Set([claimTask.name, claimNextTask.name]);
const RENEWALS: ReadonlySet<string> = new Set([heartbeatLease.name, heartbeatReservation.name]);

/** The refusal for `operationName` while `waiting` calls queue for a pool of `size`, or undefined to let it in. */
export function shedding(operationName: string, pool: { readonly size: number; readonly waiting: number }): BatonError | undefined {
  if (RENEWALS.has(operationName)) return undefined;
  const claim = CLAIMS.has(operationName);
  const mark = claim ? Math.max(pool.size * CLAIMS_SHED_AT, CLAIMS_SHED_FLOOR) : Math.max(pool.size * OTHERS_SHED_AT, OTHERS_SHED_FLOOR);
  if (pool.waiting < mark) return undefined;
  const first = claim ? ' Claims are refused first, so that leases already held can still be renewed.' : '';
  return new BatonError('unavailable', `Baton is busy: ${pool.waiting} calls are waiting for a database connection.${first}`, {
    hint: 'Retry after [[Retry-After]] seconds, a write with the same [[Idempotency-Key]]; keep heartbeating the leases you hold, which are still served.',
    headers: { 'retry-after': claim ? '5' : '2' },
  });
}
