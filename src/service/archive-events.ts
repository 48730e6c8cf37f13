import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import { shapeEvent } from '../operations/events/event-schema.ts';
import { type ArchiveStop, archiveBatch, oldestEventId } from '../store/event-archive.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace, workspaceIds } from '../store/workspace-scope.ts';

export type { ArchiveStop };

/** Events per transaction: small enough that cursor readers wait only a moment behind each one. */
const BATCH = 2000;

/** What archiving did in one workspace. */
export interface WorkspaceArchive {
  workspaceId: string;
  /** Events moved to the file and deleted, in all batches. */
  archived: number;
  /** The workspace's first event still served (its oldest valid `since`), or null when none is left. */
  oldestRetainedId: string | null;
  /** Why the run stopped short of the cutoff, when it did; null when it reached it or the end. */
  heldBack: ArchiveStop | null;
}

export interface ArchiveReport {
  /** Events archived in every workspace together. */
  archived: number;
  /** Each workspace visited, oldest first. */
  workspaces: WorkspaceArchive[];
}

/**
 * `baton archive-events`: in each workspace (or the one named), moves every event created before
 * `before` that nothing still needs into `write`, as JSON lines (`{"seq": …, …the full event,
 * "workspace_id": …}`) in commit order, and deletes it, one batch per transaction. `write` must make
 * the lines durable before it returns: the batch commits only after it. A batch whose commit fails
 * after its lines were written is taken again by the next run, so a line can repeat; `seq`
 * identifies it.
 */
export async function archiveEvents(
  db: Kysely<DB>,
  args: { before: Date; file: string; clock: Clock; write: (lines: string) => Promise<void>; workspaceId?: string },
): Promise<ArchiveReport> {
  const workspaces = args.workspaceId ? [args.workspaceId] : await workspaceIds(db);
  const reports: WorkspaceArchive[] = [];
  for (const workspaceId of workspaces) {
    const { archived, stop } = await archiveWorkspace(db, { workspaceId, before: args.before, now: () => args.clock.now(), file: args.file, maxBatches: Infinity }, async (rows) =>
      args.write(rows.map((row) => `${JSON.stringify({ seq: row.seq, ...shapeEvent(row, { view: 'full' }), workspace_id: workspaceId })}\n`).join('')),
    );
    const oldestRetainedId = await inWorkspace(db, workspaceId, (tx) => oldestEventId(tx));
    reports.push({ workspaceId, archived, oldestRetainedId, heldBack: stop });
  }
  return { archived: reports.reduce((sum, r) => sum + r.archived, 0), workspaces: reports };
}

/**
 * Archives one workspace's events created before `before`, a batch per transaction, until a batch
 * comes back short or `maxBatches` have run; `keep` receives each batch before it commits. Answers
 * how many went and, when the run stopped short of the cutoff, why.
 */
export async function archiveWorkspace(
  db: Kysely<DB>,
  args: { workspaceId: string; before: Date; now: () => Date; file: string; maxBatches: number },
  keep: Parameters<typeof archiveBatch>[2],
): Promise<{ archived: number; stop: ArchiveStop | null }> {
  let archived = 0;
  for (let batches = 0; batches < args.maxBatches; batches++) {
    const batch = await archiveBatch(db, { workspaceId: args.workspaceId, before: args.before, limit: BATCH, now: args.now(), file: args.file }, keep);
    archived += batch.rows.length;
    if (batch.rows.length < BATCH) return { archived, stop: batch.stop?.reason === 'cutoff' ? null : batch.stop };
  }
  return { archived, stop: null };
}
