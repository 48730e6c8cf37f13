import { sql, type Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** Aggregate counts for operators (/metrics): no ids, no content. */
export interface StoreStats {
  readonly tasksByStatus: Readonly<Record<string, number>>;
  readonly activeLeases: number;
  readonly pendingApprovals: number;
}

/** One round trip: tasks by status (tombstones excluded), unexpired active leases, pending approvals. */
export async function readStats(db: Kysely<DB>, now: Date): Promise<StoreStats> {
  const { rows } = await sql<{ source: string; key: string; n: number }>`
    SELECT 'task' AS source, status AS key, count(*)::int AS n FROM tasks WHERE deleted_at IS NULL GROUP BY status
    UNION ALL
    SELECT 'lease', 'active', count(*)::int FROM leases WHERE state = 'active' AND expires_at > ${now}
    UNION ALL
    SELECT 'approval', 'pending', count(*)::int FROM approvals WHERE status = 'pending'
  `.execute(db);
  const tasksByStatus: Record<string, number> = {};
  let activeLeases = 0;
  let pendingApprovals = 0;
  for (const row of rows) {
    if (row.source === 'task') tasksByStatus[row.key] = row.n;
    else if (row.source === 'lease') activeLeases = row.n;
    else pendingApprovals = row.n;
  }
  return { tasksByStatus, activeLeases, pendingApprovals };
}
