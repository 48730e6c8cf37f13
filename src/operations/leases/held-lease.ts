import { BatonError } from '../../errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { findLease, leaseIsCurrent, type LeaseRow, lockLeaseTask } from '../../store/leases.ts';
import type { TaskRow } from '../../store/tasks.ts';
import type { Tx } from '../../store/connection.ts';

export function leaseNotFound(id: string): BatonError {
  return new BatonError('not_found', `No lease ${id}.`, { hint: '[[leases_list holder=me state=active]] lists the leases you hold.' });
}

/**
 * Locks the lease's task (task first: the lock order every lease change follows), then checks the
 * lease is live and the caller may act on it: its holder, or any human when `humanMayAct`. Reads
 * `time.now` (the operation context, whose clock is read when first asked) only after the lock.
 */
export async function lockLiveLease(
  tx: Tx,
  id: string,
  actor: Principal,
  time: { readonly now: Date },
  humanMayAct: boolean,
): Promise<{ lease: LeaseRow; task: TaskRow }> {
  const held = await lockLeaseTask(tx, id);
  if (!held) throw leaseNotFound(id);
  const { task, lease: read } = held;
  // A lease that may have moved before the lock is read again, now that it cannot.
  const lease = leaseIsCurrent(read, task) ? read : await findLease(tx, id);
  if (!lease) throw leaseNotFound(id);
  // The time is read only now that the task is locked: waiting for the lock does not shorten a lease.
  assertActionable(lease, actor, time.now, humanMayAct);
  return { lease, task };
}

/** Refuses a lease the caller may not act on (not its holder, nor a human when `humanMayAct`), or one no longer live. */
export function assertActionable(lease: LeaseRow, actor: Principal, now: Date, humanMayAct: boolean): void {
  const { id } = lease;
  if (lease.holder_id !== actor.id && !(humanMayAct && actor.kind === 'human')) {
    throw new BatonError('not_lease_holder', `Lease ${id} is held by ${lease.holder_kind} ${lease.holder_id}, not you.`, {
      extra: { holder: { id: lease.holder_id, kind: lease.holder_kind } },
    });
  }
  if (lease.state === 'expired' || (lease.state === 'active' && lease.expires_at <= now)) {
    throw new BatonError('lease_expired', `Lease ${id} on task ${lease.task_id} expired at ${lease.expires_at.toISOString()}.`, {
      extra: { task_id: lease.task_id, expired_at: lease.expires_at.toISOString() },
    });
  }
  if (lease.state !== 'active') {
    throw new BatonError('lease_inactive', `Lease ${id} on task ${lease.task_id} is ${lease.state}.`, { extra: { task_id: lease.task_id, state: lease.state } });
  }
}
