import type { Kysely } from 'kysely';
import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { countLapses, expireLapses } from '../operations/tasks/attempts.ts';
import type { Ids } from '../ids.ts';
import { appendEvents, type NewEventRow } from '../store/events.ts';
import { lockLapsed, warnExpiring, workspacesWithLeasesDue } from '../store/lease-expiry.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';

const BATCH = 100;

export interface SweepReport {
  expired: number;
  warned: number;
}

/**
 * One sweep, in each workspace with a lease due in turn: warns holders of leases past 80 % of their term (`lease.expiring`), and returns work
 * whose lease ran out to the queue (`lease.expired` + `task.status_changed`), all by the system
 * actor, each batch in one transaction with its events. Safe on any number of instances at once.
 */
export async function sweepLeases(db: Kysely<DB>, deps: { clock: Clock; ids: Ids; config: Config }): Promise<SweepReport> {
  const report: SweepReport = { expired: 0, warned: 0 };
  for (const workspace of await workspacesWithLeasesDue(db, deps.clock.now())) await sweepLeasesIn(db, workspace, deps, report);
  return report;
}

async function sweepLeasesIn(db: Kysely<DB>, workspace: string, deps: { clock: Clock; ids: Ids; config: Config }, report: SweepReport): Promise<void> {
  for (;;) {
    const done = await inWorkspace(db, workspace, async (tx) => {
      const now = deps.clock.now();
      const warned = await warnExpiring(tx, now, BATCH);
      const lapsed = await lockLapsed(tx, now, { limit: BATCH });
      const expired = await expireLapses(tx, countLapses(lapsed, { config: deps.config }), now);
      const event = (type: NewEventRow['type'], subject: string, data: Record<string, unknown>): NewEventRow => ({
        id: deps.ids.make('evt'),
        type,
        subject,
        actor_id: SYSTEM_ACTOR.id,
        actor_kind: SYSTEM_ACTOR.kind,
        token_id: null,
        machine: null,
        idempotency_key: null,
        data,
        created_at: now,
      });
      await appendEvents(tx, [
        ...warned.map((w) => event('lease.expiring', w.task_id, { lease_id: w.lease_id, holder_id: w.holder_id, expires_at: w.expires_at.toISOString() })),
        ...expired.map((e) => event(e.type, e.subject, e.data)),
      ]);
      report.warned += warned.length;
      report.expired += lapsed.length;
      return warned.length < BATCH && lapsed.length < BATCH;
    });
    if (done) return;
  }
}
