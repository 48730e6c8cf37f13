import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { configuredBound } from '../configured-bounds.ts';
import type { Principal } from '../../domain/principal.ts';
import { type GrantedTask, grantLeases } from '../../store/leases.ts';
import { lockLapsed } from '../../store/lease-expiry.ts';
import { countLapses, type CountedLapse, expireLapses } from '../tasks/attempts.ts';
import type { OperationContext } from '../define-operation.ts';
import { CLAIM_FIELDS, claimedTaskView, taskOutput } from '../tasks/task-schema.ts';
import { shapeTask, type TaskShape } from '../tasks/task-view.ts';
import { type Lease, leaseOutput, toLease } from './lease-schema.ts';
import { type Discussion, discussionOutput, discussions } from '../comments/discussion.ts';
import type { Tx } from '../../store/connection.ts';
import { takeRequiredReservations } from '../reservations/task-reservations.ts';

/** Bounds and default are the server's (`resolveTtl` enforces them); derived schemas carry them (configured-bounds.ts). */
export const ttlParam = z.int().meta(configuredBound('lease_ttl')).optional();

/** The TTL to grant: the request's, checked against the configured bounds, or the default. */
export function resolveTtl(ctx: OperationContext, requested: number | undefined): number {
  const { defaultS, minS, maxS } = ctx.config.leaseTtl;
  if (requested === undefined) return defaultS;
  if (requested < minS || requested > maxS) {
    throw new BatonError('validation_failed', `ttl_s ${requested} is outside ${minS}–${maxS} seconds.`, {
      extra: { errors: [{ pointer: '/ttl_s', detail: `must be between ${minS} and ${maxS}`, location: 'body' }] },
    });
  }
  return requested;
}

export interface Claimed {
  task: TaskShape;
  lease: Lease;
  discussion: Discussion;
}

/** One claim in a claim answer: the task, your lease, and what humans said about it. */
export const claimOutput = z.object({ task: taskOutput, lease: leaseOutput, discussion: discussionOutput });
/** `claimOutput` as every claim is: its task in the claim view, each member present (the OpenAPI document's `Claim`). */
export const claimView = z.object({ task: claimedTaskView, lease: leaseOutput, discussion: discussionOutput });

/** The lapsed leases of these tasks, locked, counted as the sweeper counts them; nothing is written yet. */
export async function lapsesOf(tx: Tx, ctx: OperationContext, taskIds: readonly string[]): Promise<CountedLapse[]> {
  return countLapses(await lockLapsed(tx, ctx.now, { ids: taskIds }), ctx);
}

/**
 * Expires counted lapses and emits their events, by the system: what a grant does first to a lapsed
 * lease it would supersede. The task then waits out its back-off, or is dead-lettered, as after a sweep.
 */
export async function expireSuperseded(tx: Tx, ctx: OperationContext, counted: readonly CountedLapse[]): Promise<void> {
  for (const event of await expireLapses(tx, counted, ctx.now)) ctx.emit(event);
}

/**
 * Grants `actor` a lease on each locked, claimable task (todo: a lapsed lease is expired and counted
 * first, `expireSuperseded`), takes the reservations each requires with it (or throws
 * reservation_conflict), and records the claim.
 */
export async function claimTasks(tx: Tx, ctx: OperationContext, tasks: readonly GrantedTask[], ttlS: number): Promise<Claimed[]> {
  const actor: Principal = ctx.actor;
  const expiresAt = new Date(ctx.now.getTime() + ttlS * 1000);
  const grants = tasks.map((task) => ({
    task,
    lease: { id: ctx.ids.make('lea'), holder_id: actor.id, holder_kind: actor.kind, token_id: actor.tokenId, machine: actor.machine, ttl_s: ttlS, expires_at: expiresAt },
  }));
  const granted = await grantLeases(tx, grants, ctx.now);
  const byTask = new Map(granted.tasks.map((row) => [row.id, row]));
  await takeRequiredReservations(
    tx,
    ctx,
    grants.map(({ task, lease }) => ({ taskId: task.id, leaseId: lease.id, ttlS, expiresAt, requirements: byTask.get(task.id)?.reservations ?? null })),
  );
  // A task nobody has discussed (no human comment, no change request) has nothing to read.
  const said = await discussions(tx, granted.tasks.filter((task) => task.discussed || task.changes_requested_id !== null));
  return grants.map(({ task, lease }) => {
    ctx.emit({ type: 'task.claimed', subject: task.id, data: { lease_id: lease.id, epoch: task.lease_epoch + 1, ttl_s: ttlS, expires_at: expiresAt.toISOString() } });
    ctx.emit({ type: 'task.status_changed', subject: task.id, data: { from: 'todo', to: 'in_progress' } });
    const row = byTask.get(task.id);
    const leaseRow = granted.leases.find((l) => l.id === lease.id);
    if (!row || !leaseRow) throw new Error(`grant of ${task.id} returned no row`);
    const discussion = said.get(task.id) ?? { changes_requested: null, human_comments: [] };
    return { task: shapeTask(row, actor, { view: 'compact', fields: CLAIM_FIELDS, at: ctx.now }), lease: toLease(leaseRow, ctx.now), discussion };
  });
}
