import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { pruneExpired } from '../store/idempotency.ts';
import type { DB } from '../store/schema.ts';
import { pruneRateCounters } from '../store/tokens.ts';
import { pruneDeliveries } from '../store/webhooks.ts';

const BATCH = 1000;
const DAY_MS = 86_400_000;

export interface PruneReport {
  idempotency_keys: number;
  rate_counters: number;
  mcp_tasks: number;
  /** Finished webhook deliveries past BATON_WEBHOOK_DELIVERY_RETENTION_DAYS (0 when it is unset). */
  webhook_deliveries: number;
}

/**
 * Drops idempotency keys past their 24 h, MCP tasks past theirs, rate counters of closed windows and,
 * when BATON_WEBHOOK_DELIVERY_RETENTION_DAYS is set, finished webhook deliveries older than that.
 * Safe on many instances.
 */
export async function prune(db: Kysely<DB>, deps: { clock: Clock; rateWindowS: number; deliveryRetentionDays?: number | undefined }): Promise<PruneReport> {
  const now = deps.clock.now();
  const keys = await pruneAll(db, 'idempotency_keys', now);
  const tasks = await pruneAll(db, 'mcp_tasks', now);
  const currentWindow = Math.floor(now.getTime() / 1000 / deps.rateWindowS) * deps.rateWindowS;
  const counters = await pruneRateCounters(db, currentWindow);
  const days = deps.deliveryRetentionDays;
  const deliveries = days === undefined ? 0 : await inBatches(() => pruneDeliveries(db, new Date(now.getTime() - days * DAY_MS), BATCH));
  return { idempotency_keys: keys, rate_counters: counters, mcp_tasks: tasks, webhook_deliveries: deliveries };
}

/** Every expired row of `table`, a batch at a time (each a short statement); returns how many went. */
function pruneAll(db: Kysely<DB>, table: 'idempotency_keys' | 'mcp_tasks', now: Date): Promise<number> {
  return inBatches(() => pruneExpired(db, table, now, BATCH));
}

/** Runs `batch` until it deletes fewer than BATCH rows; returns how many it deleted in all. */
async function inBatches(batch: () => Promise<number>): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await batch();
    total += n;
    if (n < BATCH) return total;
  }
}
