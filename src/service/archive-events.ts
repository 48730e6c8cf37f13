import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { shapeEvent } from '../operations/events/event-schema.ts';
import { type ArchiveStop, archiveBatch, oldestEventId } from '../store/event-archive.ts';
import type { DB } from '../store/schema.ts';

export type { ArchiveStop };

/** Events per transaction: small enough that cursor readers wait only a moment behind each one. */
const BATCH = 2000;

export interface ArchiveReport {
  /** Events moved to the file and deleted, in all batches. */
  archived: number;
  /** The first event still served (the oldest valid `since`), or null when none is left. */
  oldestRetainedId: string | null;
  /** Why the run stopped short of the cutoff, when it did; null when it reached it or the end. */
  heldBack: ArchiveStop | null;
}

/**
 * `baton archive-events`: moves every event created before `before` that nothing still needs into
 * `write`, as JSON lines (`{"seq": …, …the full event}`) in commit order, and deletes it, one batch
 * per transaction. `write` must make the lines durable before it returns: the batch commits only
 * after it. A batch whose commit fails after its lines were written is taken again by the next
 * run, so a line can repeat; `seq` identifies it.
 */
export async function archiveEvents(
  db: Kysely<DB>,
  args: { before: Date; file: string; clock: Clock; write: (lines: string) => Promise<void> },
): Promise<ArchiveReport> {
  let archived = 0;
  for (;;) {
    const batch = await archiveBatch(db, { before: args.before, limit: BATCH, now: args.clock.now(), file: args.file }, async (rows) =>
      args.write(rows.map((row) => `${JSON.stringify({ seq: row.seq, ...shapeEvent(row, { view: 'full' }) })}\n`).join('')),
    );
    archived += batch.rows.length;
    if (batch.rows.length < BATCH) {
      return { archived, oldestRetainedId: await oldestEventId(db), heldBack: batch.stop?.reason === 'cutoff' ? null : batch.stop };
    }
  }
}
