import { Counter, type Histogram, type Registry } from 'prom-client';

const DURATIONS = 'baton_http_request_duration_seconds';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

interface Series {
  readonly labels: { readonly operation: string; readonly method: string };
  /** Requests answered since the last scrape, by status code. */
  readonly unscraped: Map<number, number>;
  /** Durations counted per bucket (not cumulative), the last one past the largest bound. */
  readonly buckets: Float64Array;
  sum: number;
}

/**
 * `baton_http_requests_total` and `baton_http_request_duration_seconds`, counted in plain maps
 * and arrays and handed to prom-client only when scraped. prom-client's own `inc` and `observe`
 * validate and hash the label object on every call, a few microseconds a request once its call
 * sites have seen many shapes; here a request costs three map lookups.
 */
export class RequestMetrics {
  readonly #series = new Map<string, Map<string, Series>>();

  constructor(registry: Registry) {
    const all = this.#series;
    new Counter({
      name: 'baton_http_requests_total',
      help: 'HTTP requests answered, by operation (or route) and status.',
      labelNames: ['operation', 'method', 'status'] as const,
      registers: [registry],
      collect() {
        for (const byMethod of all.values()) {
          for (const series of byMethod.values()) {
            for (const [status, count] of series.unscraped) this.inc({ ...series.labels, status: String(status) }, count);
            series.unscraped.clear();
          }
        }
      },
    });
    // The registry renders any metric from its name and get(); prom-client's types name only its own classes.
    const durations = { name: DURATIONS, get: async () => this.#durations(), reset: () => all.clear() };
    registry.registerMetric(durations as unknown as Histogram);
  }

  /** The histogram as prom-client's own Histogram.get() gives it: cumulative buckets, then +Inf, sum and count. */
  #durations() {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const byMethod of this.#series.values()) {
      for (const { labels, buckets, sum } of byMethod.values()) {
        let cumulative = 0;
        DURATION_BUCKETS.forEach((le, i) => {
          cumulative += buckets[i] ?? 0;
          values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${DURATIONS}_bucket` });
        });
        const count = cumulative + (buckets[DURATION_BUCKETS.length] ?? 0);
        values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${DURATIONS}_bucket` });
        values.push({ labels, value: sum, metricName: `${DURATIONS}_sum` }, { labels, value: count, metricName: `${DURATIONS}_count` });
      }
    }
    return { name: DURATIONS, help: 'Time to answer an HTTP request, by operation (or route).', type: 'histogram', aggregator: 'sum', values };
  }

  /** One answered request; `operation` is the operation name or the route pattern, never a raw URL. */
  record(operation: string, method: string, status: number, seconds: number): void {
    let byMethod = this.#series.get(operation);
    if (!byMethod) {
      byMethod = new Map<string, Series>();
      this.#series.set(operation, byMethod);
    }
    let series = byMethod.get(method);
    if (!series) {
      series = { labels: { operation, method }, unscraped: new Map(), buckets: new Float64Array(DURATION_BUCKETS.length + 1), sum: 0 };
      byMethod.set(method, series);
    }
    series.unscraped.set(status, (series.unscraped.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < DURATION_BUCKETS.length && seconds > (DURATION_BUCKETS[bucket] ?? 0)) bucket++;
    series.buckets[bucket] = (series.buckets[bucket] ?? 0) + 1;
    series.sum += seconds;
  }
}

