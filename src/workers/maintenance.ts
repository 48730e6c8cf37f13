import { sql, type Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Ids } from '../ids.ts';
import type { DB } from '../store/schema.ts';
import { deliverWebhooks } from './deliver-webhooks.ts';
import { sweepLeases } from './expire-leases.ts';
import { prune } from './prune.ts';
import { retainEvents } from './retain-events.ts';
import { flagOverdue } from './overdue.ts';
import { runSchedules } from './schedules.ts';
import type { Service } from '../service/service.ts';
import { expireAsks } from './expire-asks.ts';
import { escalateOverdue } from './escalate.ts';
import { closeExpiredApprovals } from './expire-approvals.ts';
import { sendNotifications } from './send-notifications.ts';
import type { MaintenanceReport, PassResult } from '../domain/maintenance-report.ts';
import type { Tracing } from '../tracing.ts';

export interface MaintenanceDeps {
  readonly db: Kysely<DB>;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
  readonly log: { error(details: object, message: string): void };
  /** Webhook delivery attempts are traced (and send `traceparent`) with it. */
  readonly tracing?: Tracing;
  /** Runs the operations a pass performs for a principal (a schedule's tasks). */
  readonly service: Pick<Service, 'execute'>;
}

/** One pass of one maintenance loop, as the system actor; returns what it did. */
type Pass = (deps: MaintenanceDeps) => Promise<object>;

/**
 * Every maintenance loop, by name. The in-process workers run these on timers; a serverless host
 * drives them through /cron/keepalive instead. A new loop is one line here.
 */
const PASSES: Readonly<Record<string, Pass>> = {
  lease_expiry: (d) => sweepLeases(d.db, d),
  overdue: (d) => flagOverdue(d.db, d),
  schedules: (d) => runSchedules(d.db, d),
  ask_deadlines: (d) => expireAsks(d.db, d),
  escalation: (d) => escalateOverdue(d.db, d),
  approval_expiry: (d) => closeExpiredApprovals(d.db, d),
  pruning: (d) => prune(d.db, { clock: d.clock, rateWindowS: d.config.rateLimit.windowS, deliveryRetentionDays: d.config.webhookDeliveryRetentionDays }),
  retention: (d) => retainEvents(d.db, d),
  webhook_deliveries: (d) => deliverWebhooks(d.db, d),
  notifications: (d) => sendNotifications(d.db, d),
};

/**
 * Touches the database, then runs one pass of every maintenance loop in turn. A failing pass is
 * logged and reported; the others still run. Safe beside the in-process workers and other instances
 * (every pass takes its work with SKIP LOCKED or idempotent deletes).
 */
export async function runMaintenance(deps: MaintenanceDeps): Promise<MaintenanceReport> {
  const startedAt = deps.clock.now();
  const passes: Record<string, PassResult> = {};
  const reachable = await sql`SELECT 1`.execute(deps.db).then(
    () => true,
    () => false,
  );
  if (reachable) {
    for (const [name, pass] of Object.entries(PASSES)) {
      try {
        passes[name] = { ok: true, ...(await pass(deps)) };
      } catch (error) {
        deps.log.error({ err: error, pass: name }, 'maintenance pass failed');
        passes[name] = { ok: false };
      }
    }
  }
  return {
    ok: reachable && Object.values(passes).every((p) => p.ok),
    database: reachable ? 'ok' : 'unreachable',
    passes,
    started_at: startedAt.toISOString(),
    finished_at: deps.clock.now().toISOString(),
  };
}
