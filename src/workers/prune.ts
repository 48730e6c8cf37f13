import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { pruneExpired } from '../store/idempotency.ts';
import type { DB } from '../store/schema.ts';
import { pruneRateCounters } from '../store/tokens.ts';

const BATCH = 1000;

export interface PruneReport {
  idempotency_keys: number;
  rate_counters: number;
  mcp_tasks: number;
}

/** Drops idempotency keys past their 24 h, MCP tasks past theirs and rate counters of closed windows. Safe on many instances. */
export async function prune(db: Kysely<DB>, deps: { clock: Clock; rateWindowS: number }): Promise<PruneReport> {
  const now = deps.clock.now();
  const keys = await pruneAll(db, 'idempotency_keys', now);
  const tasks = await pruneAll(db, 'mcp_tasks', now);
  const currentWindow = Math.floor(now.getTime() / 1000 / deps.rateWindowS) * deps.rateWindowS;
  const counters = await pruneRateCounters(db, currentWindow);
  return { idempotency_keys: keys, rate_counters: counters, mcp_tasks: tasks };
}

/** Every expired row of `table`, a batch at a time (each a short statement); returns how many went. */
async function pruneAll(db: Kysely<DB>, table: 'idempotency_keys' | 'mcp_tasks', now: Date): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await pruneExpired(db, table, now, BATCH);
    total += n;
    if (n < BATCH) return total;
  }
}
