import { Counter, Histogram, type Registry } from 'prom-client';

/**
 * `baton_http_requests_total` and `baton_http_request_duration_seconds`, prom-client's own
 * Counter and Histogram, by operation name (or route pattern, never a raw URL) and method.
 */
export class RequestMetrics {
  readonly #requests: Counter<'operation' | 'method' | 'status'>;
  readonly #durations: Histogram<'operation' | 'method'>;

  constructor(registry: Registry) {
    this.#requests = new Counter({
      name: 'baton_http_requests_total',
      help: 'HTTP requests answered, by operation (or route) and status.',
      labelNames: ['operation', 'method', 'status'] as const,
      registers: [registry],
    });
    this.#durations = new Histogram({
      name: 'baton_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by operation (or route).',
      labelNames: ['operation', 'method'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });
  }

  /** One answered request; `operation` is the operation name or the route pattern, never a raw URL. */
  record(operation: string, method: string, status: number, seconds: number): void {
    this.#requests.inc({ operation, method, status: String(status) });
    this.#durations.observe({ operation, method }, seconds);
  }
}
