import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { pruneKeys } from '../store/idempotency.ts';
import type { DB } from '../store/schema.ts';
import { pruneRateCounters } from '../store/tokens.ts';

const BATCH = 1000;

export interface PruneReport {
  idempotency_keys: number;
  rate_counters: number;
}

/** Drops idempotency keys past their 24 h and rate counters of closed windows. Safe on many instances. */
export async function prune(db: Kysely<DB>, deps: { clock: Clock; rateWindowS: number }): Promise<PruneReport> {
  const now = deps.clock.now();
  let keys = 0;
  for (;;) {
    const n = await pruneKeys(db, now, BATCH);
    keys += n;
    if (n < BATCH) break;
  }
  const currentWindow = Math.floor(now.getTime() / 1000 / deps.rateWindowS) * deps.rateWindowS;
  const counters = await pruneRateCounters(db, currentWindow);
  return { idempotency_keys: keys, rate_counters: counters };
}
