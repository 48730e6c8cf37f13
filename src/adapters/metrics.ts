import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { Principal } from '../domain/principal.ts';
import { TASK_STATUSES } from '../domain/task-status.ts';
import type { Service } from '../service/service.ts';
import { RequestMetrics } from './request-metrics.ts';

/**
 * Prometheus metrics at GET /metrics, one registry per app (tests run several apps in one process).
 * Request metrics are labelled by operation name (or route pattern), never by raw URL, so label
 * cardinality stays bounded. On the API's address it needs a token with `metrics:read` (or an
 * admin's `agents:admin`) of the operator's workspace (`Service.stats`): process and queue figures
 * are the whole server's, not for the world nor for another workspace. With
 * BATON_METRICS_ADDRESS set, `metricsApp` is a second app serving only /metrics there, without a
 * token (an address only the scraper reaches); undefined otherwise.
 */
export async function registerMetrics(app: FastifyInstance, service: Service, version: string): Promise<FastifyInstance | undefined> {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'baton_' });
  // The Prometheus convention for "which build runs": a constant 1, the facts in its labels.
  new Gauge({ name: 'baton_build_info', help: 'Always 1; the labels say which Baton release and Node.js version run.', labelNames: ['version', 'node'] as const, registers: [registry] }).set(
    { version, node: process.versions.node },
    1,
  );
  const requests = new RequestMetrics(registry);
  // Read at scrape time, in one query, just before the registry renders.
  const tasks = new Gauge({ name: 'baton_tasks', help: 'Tasks by status (deleted tasks excluded).', labelNames: ['status'] as const, registers: [registry] });
  const leases = new Gauge({ name: 'baton_leases_active', help: 'Unexpired active leases.', registers: [registry] });
  const approvals = new Gauge({ name: 'baton_approvals_pending', help: 'Approvals waiting for a decision.', registers: [registry] });
  const overdue = new Gauge({ name: 'baton_overdue', help: 'Asks, approvals and reviews waiting past their SLA (escalated), by kind.', labelNames: ['kind'] as const, registers: [registry] });
  const heldBack = new Gauge({
    name: 'baton_events_held_back',
    help: 'Committed events that streams, since cursors and webhooks cannot pass yet: an older transaction is still open on the PostgreSQL server.',
    registers: [registry],
  });
  const heldBackS = new Gauge({ name: 'baton_events_held_back_seconds', help: 'How long the oldest held-back event has waited (0 when none is).', registers: [registry] });
  // The service counts, by operation; a scrape copies its totals.
  const totalsByOperation = (name: string, help: string, totals: () => Iterable<readonly [string, number]>) =>
    new Counter({
      name,
      help,
      labelNames: ['operation'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [operation, n] of totals()) this.inc({ operation }, n);
      },
    });
  totalsByOperation(
    'baton_write_reruns_total',
    'Writes this instance ran again because PostgreSQL broke them off (deadlock or serialization failure), by operation. Past 3 runs the caller gets 503 write_contention.',
    () => service.writeReruns(),
  );
  totalsByOperation(
    'baton_write_groups_total',
    'Transactions that calls of a grouping write (heartbeats) shared, by operation: calls ÷ groups is how many one transaction carried.',
    () => [...service.writeGroups()].map(([operation, n]) => [operation, n.groups] as const),
  );
  totalsByOperation(
    'baton_write_group_calls_total',
    'Calls that ran in a shared transaction (baton_write_groups_total), by operation; a call that could not (a replay, a refusal) ran again by itself and counts here too.',
    () => [...service.writeGroups()].map(([operation, n]) => [operation, n.calls] as const),
  );
  totalsByOperation(
    'baton_requests_shed_total',
    'Calls this instance refused at once (503, Retry-After) because too many waited for a database connection, by operation: claims from 4 waiting per pooled connection (at least 40), other calls from 16 (at least 160), heartbeats never.',
    () => service.shedCalls(),
  );
  new Gauge({
    name: 'baton_db_pool_waiting',
    help: "Calls waiting now for a connection of this instance's database pool (BATON_DB_POOL_SIZE); from 4 per connection (at least 40), claims are refused at once.",
    registers: [registry],
    collect() {
      this.set(service.poolLoad().waiting);
    },
  });

  new Counter({
    name: 'baton_stale_reads_total',
    help: 'Reads that may be stale (lists, search, figures, exports) by the database that answered them: replica, or primary (no replica configured, it lags or failed, or the caller had just written).',
    labelNames: ['database'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const figures = service.replicaReads();
      if (figures) for (const database of ['replica', 'primary'] as const) this.inc({ database }, figures[database]);
    },
  });
  new Gauge({
    name: 'baton_replica_up',
    help: '1 while the read replica answered its last check as a standby; 0 when it is down, promoted, or not configured.',
    registers: [registry],
    collect() {
      this.set(service.replicaReads()?.lagS === undefined ? 0 : 1);
    },
  });
  new Gauge({
    name: 'baton_replica_lag_seconds',
    help: 'How far behind the primary the read replica is at most, by its last check (0 when baton_replica_up is 0).',
    registers: [registry],
    collect() {
      this.set(service.replicaReads()?.lagS ?? 0);
    },
  });

  app.addHook('onResponse', (request, reply, done) => {
    requests.record(request.operationName ?? request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  const scrape = async (reply: FastifyReply, reader?: Principal) => {
    const stats = await service.stats(reader);
    for (const status of TASK_STATUSES) tasks.set({ status }, stats.tasksByStatus[status] ?? 0);
    leases.set(stats.activeLeases);
    approvals.set(stats.pendingApprovals);
    for (const [kind, n] of Object.entries(stats.overdue)) overdue.set({ kind }, n);
    heldBack.set(stats.eventsHeldBack);
    heldBackS.set(stats.eventsHeldBackS);
    return reply.type(registry.contentType).send(await registry.metrics());
  };
  app.get('/metrics', async (request, reply) => {
    const { principal } = await service.authenticate(request.headers.authorization);
    request.principalId = principal.id;
    request.principalKind = principal.kind;
    return scrape(reply, principal);
  });
  if (!service.config.metricsAddress) return undefined;
  const metricsApp = Fastify({ logger: false });
  metricsApp.get('/metrics', (_request, reply) => scrape(reply));
  return metricsApp;
}
