import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { RequestMetrics } from './request-metrics.ts';

/** Sample lines of one metric family, as `series value`. */
async function samples(registry: Registry, prefix: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line.startsWith(prefix));
}

describe('RequestMetrics', () => {
  it('renders cumulative buckets, sum and count per operation and method, as prom-client would', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    metrics.record('tasks_get', 'GET', 200, 0.003);
    metrics.record('tasks_get', 'GET', 200, 0.005);
    metrics.record('tasks_get', 'GET', 404, 0.02);
    metrics.record('tasks_get', 'GET', 200, 7);
    metrics.record('tasks_update', 'PATCH', 409, 0.3);

    expect(await samples(registry, 'baton_http_request_duration_seconds')).toEqual([
      'baton_http_request_duration_seconds_bucket{le="0.005",operation="tasks_get",method="GET"} 2',
      'baton_http_request_duration_seconds_bucket{le="0.01",operation="tasks_get",method="GET"} 2',
      'baton_http_request_duration_seconds_bucket{le="0.025",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="0.05",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="0.1",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="0.25",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="0.5",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="1",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="2.5",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="5",operation="tasks_get",method="GET"} 3',
      'baton_http_request_duration_seconds_bucket{le="+Inf",operation="tasks_get",method="GET"} 4',
      'baton_http_request_duration_seconds_sum{operation="tasks_get",method="GET"} 7.028',
      'baton_http_request_duration_seconds_count{operation="tasks_get",method="GET"} 4',
      'baton_http_request_duration_seconds_bucket{le="0.005",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.01",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.025",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.05",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.1",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.25",operation="tasks_update",method="PATCH"} 0',
      'baton_http_request_duration_seconds_bucket{le="0.5",operation="tasks_update",method="PATCH"} 1',
      'baton_http_request_duration_seconds_bucket{le="1",operation="tasks_update",method="PATCH"} 1',
      'baton_http_request_duration_seconds_bucket{le="2.5",operation="tasks_update",method="PATCH"} 1',
      'baton_http_request_duration_seconds_bucket{le="5",operation="tasks_update",method="PATCH"} 1',
      'baton_http_request_duration_seconds_bucket{le="+Inf",operation="tasks_update",method="PATCH"} 1',
      'baton_http_request_duration_seconds_sum{operation="tasks_update",method="PATCH"} 0.3',
      'baton_http_request_duration_seconds_count{operation="tasks_update",method="PATCH"} 1',
    ]);
  });

  it('counts requests by status across scrapes, neither losing nor repeating any', async () => {
    const registry = new Registry();
    const metrics = new RequestMetrics(registry);
    metrics.record('tasks_get', 'GET', 200, 0.001);
    metrics.record('tasks_get', 'GET', 404, 0.001);
    expect(await samples(registry, 'baton_http_requests_total{')).toEqual([
      'baton_http_requests_total{operation="tasks_get",method="GET",status="200"} 1',
      'baton_http_requests_total{operation="tasks_get",method="GET",status="404"} 1',
    ]);
    expect(await samples(registry, 'baton_http_requests_total{')).toHaveLength(2);
    metrics.record('tasks_get', 'GET', 200, 0.001);
    metrics.record('/healthz', 'GET', 200, 0.001);
    expect(await samples(registry, 'baton_http_requests_total{')).toEqual([
      'baton_http_requests_total{operation="tasks_get",method="GET",status="200"} 2',
      'baton_http_requests_total{operation="tasks_get",method="GET",status="404"} 1',
      'baton_http_requests_total{operation="/healthz",method="GET",status="200"} 1',
    ]);
  });
});
