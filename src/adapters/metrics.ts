import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import { TASK_STATUSES } from '../domain/task-status.ts';
import type { Service } from '../service/service.ts';
import { RequestMetrics } from './request-metrics.ts';

/**
 * Prometheus metrics at GET /metrics, one registry per app (tests run several apps in one process).
 * Request metrics are labelled by operation name (or route pattern), never by raw URL, so label
 * cardinality stays bounded. Served without a token, like /healthz: it holds only aggregate counts.
 */
export function registerMetrics(app: FastifyInstance, service: Service, version: string): void {
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
  const heldBack = new Gauge({
    name: 'baton_events_held_back',
    help: 'Committed events that streams, since cursors and webhooks cannot pass yet: an older transaction is still open on the PostgreSQL server.',
    registers: [registry],
  });
  const heldBackS = new Gauge({ name: 'baton_events_held_back_seconds', help: 'How long the oldest held-back event has waited (0 when none is).', registers: [registry] });
  new Counter({
    name: 'baton_write_reruns_total',
    help: 'Writes this instance ran again because PostgreSQL broke them off (deadlock or serialization failure), by operation. Past 3 runs the caller gets 503 write_contention.',
    labelNames: ['operation'] as const,
    registers: [registry],
    // The service counts; a scrape copies its totals.
    collect() {
      this.reset();
      for (const [operation, n] of service.writeReruns()) this.inc({ operation }, n);
    },
  });

  app.addHook('onResponse', (request, reply, done) => {
    requests.record(request.operationName ?? request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (_request, reply) => {
    const stats = await service.stats();
    for (const status of TASK_STATUSES) tasks.set({ status }, stats.tasksByStatus[status] ?? 0);
    leases.set(stats.activeLeases);
    approvals.set(stats.pendingApprovals);
    heldBack.set(stats.eventsHeldBack);
    heldBackS.set(stats.eventsHeldBackS);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
