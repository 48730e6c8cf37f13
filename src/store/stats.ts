import { sql, type Kysely } from 'kysely';
import { SETTLED } from './events.ts';
import type { DB } from './schema.ts';

/** Aggregate counts for operators (/metrics): no ids, no content. */
export interface StoreStats {
  readonly tasksByStatus: Readonly<Record<string, number>>;
  readonly activeLeases: number;
  readonly pendingApprovals: number;
  /** Waits past their SLA, marked by the escalation pass and still waiting: open asks, pending approvals, tasks in review. */
  readonly overdue: Readonly<Record<'ask' | 'approval' | 'review', number>>;
  /** Committed events that cursors cannot pass yet: a transaction that began before they did is still open somewhere on the server. */
  readonly eventsHeldBack: number;
  /** How long the oldest of those has been waiting, in whole seconds (0 when none is). */
  readonly eventsHeldBackS: number;
}

/**
 * One round trip: tasks by status (tombstones excluded), unexpired active leases, pending
 * approvals, overdue waits (open asks, pending approvals and tasks in review, each few), and the events held back from cursors (`SETTLED`, src/store/events.ts): normally none
 * for more than a moment, but a long transaction anywhere on the PostgreSQL server stalls every
 * event cursor until it ends (docs/operations.md).
 */
export async function readStats(db: Kysely<DB>, now: Date): Promise<StoreStats> {
  const { rows } = await sql<{ source: string; key: string; n: number }>`
    WITH held AS (
      SELECT count(*)::int AS n, COALESCE(GREATEST(0, floor(EXTRACT(EPOCH FROM ${now}::timestamptz - min(created_at)))), 0)::int AS waited_s
      FROM events WHERE seq >= ${SETTLED}
    )
    SELECT 'task' AS source, status AS key, count(*)::int AS n FROM tasks WHERE deleted_at IS NULL GROUP BY status
    UNION ALL
    SELECT 'lease', 'active', count(*)::int FROM leases WHERE state = 'active' AND expires_at > ${now}
    UNION ALL
    SELECT 'approval', 'pending', count(*)::int FROM approvals WHERE status = 'pending'
    UNION ALL
    SELECT 'overdue', 'ask', count(*)::int FROM asks WHERE status = 'open' AND overdue_at IS NOT NULL
    UNION ALL
    SELECT 'overdue', 'approval', count(*)::int FROM approvals WHERE status = 'pending' AND overdue_at IS NOT NULL AND expires_at > ${now}
    UNION ALL
    SELECT 'overdue', 'review', count(*)::int FROM tasks
    WHERE status = 'in_review' AND deleted_at IS NULL AND review_overdue_at >= coalesce((handoff->>'at')::timestamptz, updated_at)
    UNION ALL
    SELECT 'events', 'held_back', n FROM held
    UNION ALL
    SELECT 'events', 'held_back_s', waited_s FROM held
  `.execute(db);
  const tasksByStatus: Record<string, number> = {};
  let activeLeases = 0;
  let pendingApprovals = 0;
  let eventsHeldBack = 0;
  let eventsHeldBackS = 0;
  const overdue = { ask: 0, approval: 0, review: 0 };
  for (const row of rows) {
    if (row.source === 'task') tasksByStatus[row.key] = row.n;
    else if (row.source === 'lease') activeLeases = row.n;
    else if (row.source === 'approval') pendingApprovals = row.n;
    else if (row.source === 'overdue') overdue[row.key as keyof typeof overdue] = row.n;
    else if (row.key === 'held_back') eventsHeldBack = row.n;
    else eventsHeldBackS = row.n;
  }
  return { tasksByStatus, activeLeases, pendingApprovals, overdue, eventsHeldBack, eventsHeldBackS };
}
