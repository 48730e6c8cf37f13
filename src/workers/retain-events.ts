import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { archiveWorkspace } from '../service/archive-events.ts';
import type { DB } from '../store/schema.ts';
import { listWorkspaceSettings } from '../store/workspaces.ts';

const DAY_MS = 86_400_000;

/** Batches (of 2,000 events) one pass takes from a workspace: a backlog drains over a few passes, not in one long one. */
const BATCHES_PER_PASS = 10;

export interface RetentionReport {
  /** Events deleted in every workspace this pass. */
  events_deleted: number;
}

/**
 * Retention (spec/identity.md "Retention"): in each workspace that keeps its events for a number
 * of days (its own `event_retention_days`, else BATON_EVENT_RETENTION_DAYS), deletes the events
 * older than that, as `baton archive-events` does but without writing them anywhere, and only
 * those no enabled webhook still needs. Each deletion is an archiving run of that workspace, so its
 * cursors into the deleted range get 410 `cursor_archived`. Safe on many instances: a workspace's
 * runs take turns, and a run that finds another under way skips it this pass.
 */
export async function retainEvents(db: Kysely<DB>, deps: { clock: Clock; config: Pick<Config, 'eventRetentionDays'> }): Promise<RetentionReport> {
  let deleted = 0;
  for (const workspace of await listWorkspaceSettings(db)) {
    const days = workspace.event_retention_days ?? deps.config.eventRetentionDays;
    if (days === undefined || days === null) continue;
    const before = new Date(deps.clock.now().getTime() - days * DAY_MS);
    const run = await archiveWorkspace(
      db,
      { workspaceId: workspace.id, before, now: () => deps.clock.now(), file: `(deleted: kept ${days} days)`, maxBatches: BATCHES_PER_PASS },
      async () => undefined,
    );
    deleted += run.archived;
  }
  return { events_deleted: deleted };
}
