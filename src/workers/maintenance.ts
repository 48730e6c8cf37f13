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
import { type Loop, startLoop } from './loop.ts';
import type { ReportFailure } from './background-failures.ts';

export interface MaintenanceDeps {
  readonly db: Kysely<DB>;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
  readonly log: { error(details: object, message: string): void; warn(details: object, message: string): void };
  /** Where the in-process loops report a failing pass (collapsing a database outage). */
  readonly failed: ReportFailure;
  /** Webhook delivery attempts are traced (and send `traceparent`) with it. */
  readonly tracing?: Tracing;
  /** Runs the operations a pass performs for a principal (a schedule's tasks). */
  readonly service: Pick<Service, 'execute'>;
}

/** One pass of one maintenance loop, as the system actor; returns what it did. */
type Pass = (deps: MaintenanceDeps) => Promise<object>;

/** The `minute` passes: expired keys, closed rate windows and old events only cost space, so once a minute is plenty. */
const MINUTE_MS = 60_000;

/**
 * Every maintenance loop, by name, and how often the in-process workers run it: `sweep` every
 * BATON_SWEEP_INTERVAL_MS, `minute` once a minute, `own` by a worker of its own that commits wake
 * (webhook deliveries, started by the server). A serverless host drives them all through
 * /cron/keepalive instead. A new loop is one line here, and both run it.
 */
const PASSES: Readonly<Record<string, { readonly run: Pass; readonly every: 'sweep' | 'minute' | 'own' }>> = {
  lease_expiry: { run: (d) => sweepLeases(d.db, d), every: 'sweep' },
  overdue: { run: (d) => flagOverdue(d.db, d), every: 'sweep' },
  schedules: { run: (d) => runSchedules(d.db, d), every: 'sweep' },
  ask_deadlines: { run: (d) => expireAsks(d.db, d), every: 'sweep' },
  escalation: { run: (d) => escalateOverdue(d.db, d), every: 'sweep' },
  approval_expiry: { run: (d) => closeExpiredApprovals(d.db, d), every: 'sweep' },
  pruning: { run: (d) => prune(d.db, { clock: d.clock, rateWindowS: d.config.rateLimit.windowS, deliveryRetentionDays: d.config.webhookDeliveryRetentionDays }), every: 'minute' },
  retention: { run: (d) => retainEvents(d.db, d), every: 'minute' },
  webhook_deliveries: { run: (d) => deliverWebhooks(d.db, d), every: 'own' },
  notifications: { run: (d) => sendNotifications(d.db, d), every: 'sweep' },
};

/**
 * Starts the in-process loops of every pass but those with a worker of their own: one loop each, so
 * a slow pass (a schedule creating its tasks) never holds back another (lease expiry). A failing
 * pass is logged; the loop goes on.
 */
export function startMaintenanceLoops(deps: MaintenanceDeps): Loop[] {
  const loops: Loop[] = [];
  for (const [name, pass] of Object.entries(PASSES)) {
    if (pass.every === 'own') continue;
    const intervalMs = pass.every === 'sweep' ? deps.config.sweepIntervalMs : MINUTE_MS;
    loops.push(startLoop(intervalMs, () => pass.run(deps), (err) => deps.failed(err, { pass: name }, 'maintenance pass failed')));
  }
  return loops;
}

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
        passes[name] = { ok: true, ...(await pass.run(deps)) };
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
