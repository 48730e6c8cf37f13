import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { engine, startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** The value of one sample line, e.g. `baton_tasks{status="todo"} 2`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('serves Prometheus text with request counts by operation and live task, lease and approval gauges', async () => {
    await t.request('POST', '/api/v1/tasks', { body: { title: 'one' } });
    await t.request('POST', '/api/v1/tasks', { body: { title: 'two' } });
    await t.request('POST', '/api/v1/tasks/claim', { body: {} });
    await t.request('GET', '/api/v1/tasks/tsk_nope');

    const res = await t.request('GET', '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(res.body, 'baton_http_requests_total{operation="tasks_create",method="POST",status="201"}')).toBe(2);
    expect(sample(res.body, 'baton_http_requests_total{operation="tasks_get",method="GET",status="400"}')).toBe(1);
    expect(sample(res.body, 'baton_tasks{status="todo"}')).toBe(1);
    expect(sample(res.body, 'baton_tasks{status="in_progress"}')).toBe(1);
    expect(sample(res.body, 'baton_tasks{status="done"}')).toBe(0);
    expect(sample(res.body, 'baton_leases_active')).toBe(1);
    expect(sample(res.body, 'baton_approvals_pending')).toBe(0);
    expect(res.body).toContain('baton_events_held_back ');
    expect(res.body).toContain('baton_events_held_back_seconds ');
    // No write ran again here; the counter is served (without samples) all the same.
    expect(res.body).toContain('# TYPE baton_write_reruns_total counter');
    expect(res.body).not.toContain('baton_write_reruns_total{');
    expect(res.body).toContain('baton_http_request_duration_seconds_bucket');
    expect(res.body).toContain('baton_process_cpu_seconds_total');
  });

  it('labels unmatched URLs as one series, not one per path', async () => {
    await t.request('GET', '/nope/1', { token: null });
    await t.request('GET', '/nope/2', { token: null });
    const res = await t.request('GET', '/metrics');
    expect(res.body).not.toContain('/nope/');
  });
});

describe('GET /metrics is not open to the world', () => {
  it('needs a token: 401 without one, 403 forbidden_scope naming metrics:read without the scope', async () => {
    const anonymous = await t.request('GET', '/metrics', { token: null });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(anonymous.json()).toMatchObject({ code: 'unauthenticated' });
    const worker = await t.addPrincipal({ scopes: ['tasks:read', 'tasks:write'] });
    const refused = await t.request('GET', '/metrics', { token: worker.token });
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden_scope', required_scope: 'metrics:read' });
    expect(refused.body).not.toContain('baton_tasks');
  });

  it('serves a scraper whose token has only metrics:read, and an admin (agents:admin) made before the scope existed', async () => {
    const scraper = await t.addPrincipal({ scopes: ['metrics:read'] });
    const scraped = await t.request('GET', '/metrics', { token: scraper.token });
    expect(scraped.status).toBe(200);
    expect(scraped.body).toContain('baton_build_info');
    // metrics:read opens nothing else.
    expect((await t.request('GET', '/api/v1/tasks', { token: scraper.token })).status).toBe(403);
    const olderAdmin = await t.addPrincipal({ kind: 'human', scopes: ['agents:admin', 'tasks:read'] });
    expect((await t.request('GET', '/metrics', { token: olderAdmin.token })).status).toBe(200);
  });

  it('with BATON_METRICS_ADDRESS, serves /metrics there without a token (and nothing else), while the API address still needs one', async () => {
    const separate = await startTestServer({ metricsAddress: { host: '127.0.0.1', port: 0 } });
    try {
      const metricsApp = separate.server.metricsApp;
      if (!metricsApp) throw new Error('BATON_METRICS_ADDRESS should make a metrics listener');
      const address = await metricsApp.listen({ host: '127.0.0.1', port: 0 });
      const open = await fetch(`${address}/metrics`);
      expect(open.status).toBe(200);
      expect(await open.text()).toContain('baton_tasks{status="todo"}');
      expect((await fetch(`${address}/api/v1/tasks`)).status).toBe(404);
      expect((await fetch(`${address}/healthz`)).status).toBe(404);
      expect((await separate.request('GET', '/metrics', { token: null })).status).toBe(401);
    } finally {
      await separate.close();
    }
    expect(t.server.metricsApp).toBeUndefined();
  });
});

describe.skipIf(engine !== 'postgres')('GET /metrics: events held back by a long transaction (PostgreSQL only: PGlite has one connection)', () => {
  it('counts the committed events cursors cannot pass while an older transaction is open, and for how long, until it ends', async () => {
    let at = Date.parse('2026-11-26T09:00:00Z');
    const clock: Clock = { now: () => new Date(at) };
    const held = await startTestServer({}, { clock });
    // Any database on the same server will do: transaction ids are server-wide.
    const other = new pg.Client({ connectionString: process.env.BATON_TEST_DATABASE_URL });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      expect((await held.request('POST', '/api/v1/tasks', { body: { title: 'written behind an open transaction' } })).status).toBe(201);
      at += 90_000;
      const metrics = async () => (await held.request('GET', '/metrics')).body;
      const body = await metrics();
      expect(sample(body, 'baton_events_held_back')).toBeGreaterThanOrEqual(1);
      expect(sample(body, 'baton_events_held_back_seconds')).toBeGreaterThanOrEqual(90);
      await other.query('COMMIT');
      // Other test files' transactions are short; once they pass, nothing is held back.
      await expect.poll(async () => sample(await metrics(), 'baton_events_held_back'), { timeout: 15_000 }).toBe(0);
      expect(sample(await metrics(), 'baton_events_held_back_seconds')).toBe(0);
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
      await held.close();
    }
  });
});
