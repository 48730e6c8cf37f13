import { type Kysely, sql } from 'kysely';
import type { Clock } from '../clock.ts';
import type { DB } from '../store/schema.ts';

/**
 * Where a read that may be stale (an operation with `staleReads`, spec/api.md "Reads from a
 * replica") runs: on the standby when one is configured, answering, and at most `maxLagS` behind
 * the primary; on the primary otherwise, and for a caller who wrote through this instance within
 * the last `maxLagS`, so that its own writes are in its lists (read-your-writes).
 *
 * Lag is measured against the primary's WAL position, not the standby's replay timestamp (which
 * stops moving whenever the primary is idle): every `CHECK_INTERVAL_MS` the primary's
 * `pg_current_wal_lsn()` is noted with the clock's time, then the standby's
 * `pg_last_wal_replay_lsn()` is read. The standby holds every commit acknowledged before the
 * newest note it has replayed past, so its lag is at most the time since that note. A standby
 * that is not in recovery (promoted, or a primary named by mistake) is not used.
 */
export interface ReplicaReads {
  /** The handle a stale read by `principalId` runs on now, and which one it is. */
  pick(principalId: string): Promise<{ readonly db: Kysely<DB>; readonly on: 'replica' | 'primary' }>;
  /** A write by `principalId` committed through this instance: its stale reads go to the primary for `maxLagS`. */
  wrote(principalId: string): void;
  /** A read on the replica failed (down, cancelled by recovery): the next ones go to the primary until a check finds it well. */
  failed(): void;
  /** Stale reads served by each database since start, and the lag the last check found (undefined: unknown or unusable). */
  figures(): { readonly replica: number; readonly primary: number; readonly lagS: number | undefined };
}

/** How often the standby's lag is measured (a read past it measures again first). */
const CHECK_INTERVAL_MS = 1_000;

interface Note {
  readonly at: number;
  readonly lsn: bigint;
}

export function replicaReads(deps: { primary: Kysely<DB>; replica: Kysely<DB>; clock: Clock; maxLagS: number }): ReplicaReads {
  const maxLagMs = deps.maxLagS * 1000;
  let notes: Note[] = [];
  let checkedAt = -Infinity;
  let checking: Promise<void> | undefined;
  /** Clock time up to which the standby is known to hold every acknowledged commit; undefined: unusable. */
  let freshAsOf: number | undefined;
  const writers = new Map<string, number>();
  const served = { replica: 0, primary: 0 };

  const check = async () => {
    const at = deps.clock.now().getTime();
    checkedAt = at;
    try {
      const primary = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(deps.primary);
      notes.push({ at, lsn: lsnValue(primary.rows[0]?.lsn ?? '0/0') });
      const standby = await sql<{ recovering: boolean; lsn: string | null }>`SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS lsn`.execute(deps.replica);
      const row = standby.rows[0];
      const replayed = row?.recovering && row.lsn !== null ? lsnValue(row.lsn) : undefined;
      const newest = replayed === undefined ? undefined : notes.findLast((note) => note.lsn <= replayed);
      if (newest) freshAsOf = Math.max(freshAsOf ?? -Infinity, newest.at);
      if (replayed === undefined) freshAsOf = undefined;
    } catch {
      freshAsOf = undefined;
    }
    // Notes the standby has passed, and those too old to ever make it fresh enough, are not needed again.
    const latest = notes.at(-1);
    notes = notes.filter((note) => note.at > (freshAsOf ?? -Infinity) && note.at >= at - maxLagMs);
    if (notes.length === 0 && latest) notes.push(latest);
  };

  return {
    async pick(principalId) {
      const now = deps.clock.now().getTime();
      if (now - checkedAt >= CHECK_INTERVAL_MS) {
        const first = checkedAt === -Infinity;
        const measuring = (checking ??= check().finally(() => (checking = undefined)));
        // Waited for only while the standby is in use (or at the first read): a standby that is down
        // costs each read nothing but the primary, and one read per interval at most the connect timeout.
        if (freshAsOf !== undefined || first) await measuring;
      }
      const wroteAt = writers.get(principalId);
      const usable = freshAsOf !== undefined && now - freshAsOf <= maxLagMs && (wroteAt === undefined || now - wroteAt > maxLagMs);
      if (usable) {
        served.replica++;
        return { db: deps.replica, on: 'replica' };
      }
      served.primary++;
      return { db: deps.primary, on: 'primary' };
    },
    wrote(principalId) {
      const now = deps.clock.now().getTime();
      writers.delete(principalId);
      writers.set(principalId, now);
      // Insertion order is write order: whoever wrote longer ago than the window needs no entry.
      for (const [id, at] of writers) {
        if (now - at <= maxLagMs) break;
        writers.delete(id);
      }
    },
    failed() {
      freshAsOf = undefined;
      // The read `pick` counted for the replica is answered by the primary.
      served.replica--;
      served.primary++;
    },
    figures() {
      const now = deps.clock.now().getTime();
      return { ...served, lagS: freshAsOf === undefined ? undefined : Math.max(0, now - freshAsOf) / 1000 };
    },
  };
}

/** A PostgreSQL LSN (`16/B374D848`) as a number that orders as the WAL does. */
export function lsnValue(lsn: string): bigint {
  const [high = '0', low = '0'] = lsn.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}
