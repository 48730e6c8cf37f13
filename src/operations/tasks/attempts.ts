import { FAILURES_KEPT, failAttempt } from '../../domain/attempts.ts';
import type { Config } from '../../config.ts';
import type { AttemptFailure } from '../../store/schema.ts';
import type { TaskChanges, TaskRow } from '../../store/tasks.ts';
import type { EventDraft } from '../define-operation.ts';
import type { Tx } from '../../store/connection.ts';
import { expireLapsed, type Lapsed } from '../../store/lease-expiry.ts';

/** The task columns a failed attempt sets. */
export type AttemptChanges = Required<Pick<TaskChanges, 'status' | 'attempts' | 'not_before' | 'blocked_reason' | 'failures'>>;

/**
 * What a failed attempt does to a task whose lease just ended without a hand-in: the changes
 * (status todo with a back-off, or blocked with `attempts_exhausted`) and the events to write,
 * `task.attempt_failed`, then `task.status_changed`, then `task.dead_lettered` when exhausted.
 */
export function failedAttempt(
  row: Pick<TaskRow, 'id' | 'attempts' | 'max_attempts' | 'failures'>,
  failure: Omit<AttemptFailure, 'at'> & { code: string },
  ctx: { config: Config; now: Date; by?: 'system' },
): { changes: AttemptChanges; events: EventDraft[] } {
  const outcome = failAttempt(row, { maxAttempts: ctx.config.maxAttempts, backoffS: ctx.config.retryBackoffS }, ctx.now);
  const failures = [...row.failures, { at: ctx.now.toISOString(), ...failure }].slice(-FAILURES_KEPT);
  const status = outcome.exhausted ? 'blocked' : 'todo';
  const by = ctx.by ? { by: ctx.by } : {};
  const events: EventDraft[] = [
    {
      type: 'task.attempt_failed',
      subject: row.id,
      data: { attempt: outcome.attempts, max_attempts: outcome.maxAttempts, kind: failure.kind, code: failure.code, reason: failure.reason, lease_id: failure.lease_id, not_before: outcome.notBefore?.toISOString() ?? null },
      ...by,
    },
    { type: 'task.status_changed', subject: row.id, data: { from: 'in_progress', to: status, reason: outcome.exhausted ? 'attempts_exhausted' : failure.kind === 'expired' ? 'lease_expired' : 'failed' }, ...by },
  ];
  if (outcome.exhausted) events.push({ type: 'task.dead_lettered', subject: row.id, data: { attempts: outcome.attempts, failures }, ...by });
  return {
    changes: { status, attempts: outcome.attempts, not_before: outcome.notBefore, blocked_reason: outcome.exhausted ? 'attempts_exhausted' : null, failures },
    events,
  };
}

/** A lapsed lease counted as a failed attempt: where its task goes, and the events that say so. */
export interface CountedLapse {
  readonly lapsed: Lapsed;
  readonly changes: AttemptChanges;
  /** `lease.expired`, then the failed attempt's events, all by the system. */
  readonly events: EventDraft[];
}

/**
 * What counting each lapsed lease as a failed attempt does to its task; nothing is written (see
 * `expireLapses`). The attempt failed when its lease ran out, so its failure time and back-off run
 * from `expires_at`, not from when it was found: a sweep and a claim that refuses (and rolls back)
 * count the same lapse to the same `not_before`.
 */
export function countLapses(lapsed: readonly Lapsed[], ctx: { config: Config }): CountedLapse[] {
  return lapsed.map((l) => {
    const failed = failedAttempt(
      { id: l.task_id, attempts: l.attempts, max_attempts: l.max_attempts, failures: l.failures },
      { kind: 'expired', code: 'lapsed', reason: null, lease_id: l.lease_id, holder_id: l.holder_id },
      { config: ctx.config, now: l.expires_at, by: 'system' },
    );
    const expired: EventDraft = { type: 'lease.expired', subject: l.task_id, data: { lease_id: l.lease_id, holder_id: l.holder_id, expired_at: l.expires_at.toISOString() }, by: 'system' };
    return { lapsed: l, changes: failed.changes, events: [expired, ...failed.events] };
  });
}

/**
 * Expires counted lapses, their tasks locked (`lockLapsed`): each lease `expired`, each task moved
 * as its failed attempt says (back-off, or the dead-letter). The sweeper and every grant that
 * supersedes a lapsed lease go through here, so a lapse counts the same whoever finds it. Returns
 * the events to write, in order.
 */
export async function expireLapses(tx: Tx, counted: readonly CountedLapse[], now: Date): Promise<EventDraft[]> {
  await expireLapsed(tx, counted.map((c) => c.lapsed), counted.map((c) => ({ task_id: c.lapsed.task_id, ...c.changes })), now);
  return counted.flatMap((c) => c.events);
}
