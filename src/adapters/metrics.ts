import type { FastifyInstance } from 'fastify';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { TASK_STATUSES } from '../domain/task-status.ts';
import type { Service } from '../service/service.ts';

/**
 * Prometheus metrics at GET /metrics, one registry per app (tests run several apps in one process).
 * Request metrics are labelled by operation name (or route pattern), never by raw URL, so label
 * cardinality stays bounded. Served without a token, like /healthz: it holds only aggregate counts.
 */
export function registerMetrics(app: FastifyInstance, service: Service): void {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'baton_' });
  const labelNames = ['operation', 'method', 'status'] as const;
  const requests = new Counter({ name: 'baton_http_requests_total', help: 'HTTP requests answered, by operation (or route) and status.', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'baton_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by operation (or route).',
    labelNames: ['operation', 'method'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  // Read at scrape time, in one query, just before the registry renders.
  const tasks = new Gauge({ name: 'baton_tasks', help: 'Tasks by status (deleted tasks excluded).', labelNames: ['status'] as const, registers: [registry] });
  const leases = new Gauge({ name: 'baton_leases_active', help: 'Unexpired active leases.', registers: [registry] });
  const approvals = new Gauge({ name: 'baton_approvals_pending', help: 'Approvals waiting for a decision.', registers: [registry] });

  app.addHook('onResponse', (request, reply, done) => {
    const operation = request.operationName ?? request.routeOptions.url ?? 'unmatched';
    requests.inc({ operation, method: request.method, status: String(reply.statusCode) });
    duration.observe({ operation, method: request.method }, reply.elapsedTime / 1000);
    done();
  });
  app.get('/metrics', async (_request, reply) => {
    const stats = await service.stats();
    for (const status of TASK_STATUSES) tasks.set({ status }, stats.tasksByStatus[status] ?? 0);
    leases.set(stats.activeLeases);
    approvals.set(stats.pendingApprovals);
    return reply.type(registry.contentType).send(await registry.metrics());
  });
}
