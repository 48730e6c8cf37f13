import { type Kysely, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { AttemptFailure, DB } from './schema.ts';
import { workspacesWith } from './workspace-scope.ts';

export interface Lapsed {
  task_id: string;
  lease_id: string;
  holder_id: string;
  expires_at: Date;
  attempts: number;
  max_attempts: number | null;
  failures: AttemptFailure[];
}

/** Where a lapsed task goes: back to the queue after a back-off, or out of it (blocked) with its attempts exhausted. */
export interface LapsedOutcome {
  task_id: string;
  status: string;
  attempts: number;
  not_before: Date | null;
  blocked_reason: 'attempts_exhausted' | null;
  failures: AttemptFailure[];
}

/**
 * Locks in-progress tasks whose lease has run out: the `limit` that ran out first (the sweeper), or
 * those of `ids` that still have (a claim that picked them). SKIP LOCKED: several instances sweep
 * at once without taking the same task, and a task a claim holds is left to that claim; a row this
 * transaction already locked is never skipped. A task whose lease was expired, renewed or replaced
 * before the lock fails the re-checked filter and is left out, so a lapse is counted once.
 */
export async function lockLapsed(tx: Tx, now: Date, which: { limit: number } | { ids: readonly string[] }): Promise<Lapsed[]> {
  let query = tx
    .selectFrom('tasks')
    .select(['id as task_id', 'lease_id', 'lease_holder_id as holder_id', 'lease_expires_at as expires_at', 'attempts', 'max_attempts', 'failures'])
    .where(lapsed(now))
    .orderBy('lease_expires_at');
  if ('ids' in which) query = query.where('id', '=', (eb) => eb.fn.any(eb.val(which.ids)));
  else query = query.limit(which.limit);
  const rows = await query.forUpdate().skipLocked().execute();
  return rows.filter((r): r is Lapsed => r.lease_id !== null && r.holder_id !== null && r.expires_at !== null);
}

/** Ends the leases of locked, lapsed tasks (expired) and moves each task as its outcome says, each attempt counted. */
export async function expireLapsed(tx: Tx, lapsed: readonly Lapsed[], outcomes: readonly LapsedOutcome[], now: Date): Promise<void> {
  if (lapsed.length === 0) return;
  await tx.updateTable('leases').set({ state: 'expired', ended_at: now }).where('id', '=', (eb) => eb.fn.any(eb.val(lapsed.map((l) => l.lease_id)))).execute();
  // One statement per task (a sweep batch is at most 100): each has its own attempt count and back-off.
  for (const outcome of outcomes) {
    await tx
      .updateTable('tasks')
      .set({
        status: outcome.status,
        attempts: outcome.attempts,
        not_before: outcome.not_before,
        blocked_reason: outcome.blocked_reason,
        failures: JSON.stringify(outcome.failures) as unknown as AttemptFailure[],
        lease_id: null,
        lease_holder_id: null,
        lease_holder_kind: null,
        lease_expires_at: null,
        version: sql`version + 1`,
        updated_at: now,
        updated_by_id: 'system',
        updated_by_kind: 'system',
      })
      .where('id', '=', outcome.task_id)
      .execute();
  }
}

export interface Expiring {
  task_id: string;
  lease_id: string;
  holder_id: string;
  expires_at: Date;
}

/**
 * Marks live leases past 80 % of their term as warned, once per term, and returns them. Locks the
 * task rows first (the lease lock order), skipping any another transaction holds. Reads only the
 * leases due, off the index of `warn_at` (migration 0334): the live leases not yet due are most of a
 * fleet's, and walking them took 81 ms a sweep at 20,000.
 */
export async function warnExpiring(tx: Tx, now: Date, limit: number): Promise<Expiring[]> {
  const { rows } = await sql<Expiring>`
    WITH due AS (
      SELECT t.id AS task_id, l.id AS lease_id
      FROM (SELECT id, warn_at FROM leases WHERE ${warnDue(now)}) l JOIN tasks t ON t.lease_id = l.id
      ORDER BY l.warn_at
      LIMIT ${limit}
      FOR UPDATE OF t SKIP LOCKED
    )
    -- Checked again on the lease's newest version: another instance's sweep may have warned it
    -- (and committed) after this statement's snapshot read it unwarned; the task lock alone does not
    -- re-read the lease.
    UPDATE leases SET warned_at = ${now}
    FROM due WHERE leases.id = due.lease_id AND leases.warned_at IS NULL
    RETURNING due.task_id, leases.id AS lease_id, leases.holder_id, leases.expires_at`.execute(tx);
  return rows;
}

/** Tasks whose lease has run out (of `tasks`). */
const lapsed = (now: Date) => sql<boolean>`status = 'in_progress' AND lease_expires_at <= ${now}`;

/** Live leases past 80 % of their term, not warned in it (of `leases`). */
const warnDue = (now: Date) => sql<boolean>`state = 'active' AND warned_at IS NULL AND warn_at <= ${now} AND expires_at > ${now}`;

/** The workspaces with a lease to warn or a lapsed task to return now: the sweep visits only those. */
export function workspacesWithLeasesDue(db: Kysely<DB>, now: Date): Promise<string[]> {
  return workspacesWith(db, [
    { from: 'tasks', where: lapsed(now) },
    { from: 'leases', where: warnDue(now) },
  ]);
}
