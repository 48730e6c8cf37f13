import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { DURATION_EDGES_S } from '../../src/store/stat-days.ts';
import type { Principal } from '../harness.ts';
import { type Cluster, createTask, INSTANCES, startInstances, WORKER_SCOPES } from '../leases/instances.ts';
import { expectProblem } from '../rest/fixtures.ts';

/**
 * Insight (issue 41 §3, spec/analytics.md): a small history made through the public API on a
 * clock the test moves, and the figures `insight_get` answers, each counted by hand below; then
 * concurrent writers through every instance (two on PostgreSQL), counted from the raw tables.
 */
const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-20T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const advance = (seconds: number) => (at = new Date(at.getTime() + seconds * 1000));

interface Duration {
  count: number;
  mean: number | null;
  p50: number | null;
  p90: number | null;
}
interface Figures {
  tasks_done: number;
  done_per_day: number;
  cycle_time_s: Duration;
  lead_time_s: Duration;
  review_wait_s: Duration;
  time_in_status_s: Record<string, Duration>;
  first_review: { decided: number; approved: number; rate: number | null };
  runs: { ended: number; failed: number; failure_rate: number | null; duration_s: Duration; failures: { code: string; count: number }[] };
  usage: { input_tokens: number; output_tokens: number; tool_calls: number; cost: { currency: string; amount: number }[]; per_done_task: unknown };
}
interface Stats {
  from: string;
  to: string;
  days: number;
  totals: Figures;
  groups: { key: string; figures: Figures }[];
  groups_truncated: boolean;
}

let t: Cluster;
let a: Principal;
let b: Principal;
beforeAll(async () => {
  t = await startInstances(
    INSTANCES,
    // Leases of up to a day by default, so the history needs no heartbeats.
    { cronSecret: CRON_SECRET, sweepIntervalMs: 0, maxAttempts: 3, retryBackoffS: [30, 300], leaseTtl: { defaultS: 86_400, minS: 30, maxS: 86_400 } },
    clock,
  );
  a = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  b = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  await seedHistory();
});
afterAll(() => t.close());

async function ok(method: string, url: string, body: unknown, token?: string): Promise<Record<string, unknown>> {
  const res = await t.request(method, url, { body, ...(token ? { token } : {}) });
  expect(res.status, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.json();
}
const claim = async (task: string, who: Principal, ttl_s = 86_400) => ((await ok('POST', `/api/v1/tasks/${task}/claim`, { ttl_s }, who.token)).lease as { id: string }).id;

/**
 * Day 1 (2026-11-20), from 09:00: T1 [api], T2 [api, web] and T3 [web] created. 09:10 A claims T1,
 * B claims T2; both report usage. 10:10 both hand in. 10:40 T1 approved (first pass), T2 sent back
 * (a new lease for B). 11:00 B hands T2 in again; 11:30 approved. 11:30 A claims T3, reports usage;
 * 11:40 releases it failed (`test_failure`). Day 2, 09:00: A claims T3 for 60 s and lets the lease lapse; a sweep
 * at 09:01:01 counts it.
 */
async function seedHistory(): Promise<void> {
  const t1 = (await createTask(t, { title: 'T1', labels: ['api'] })).id;
  const t2 = (await createTask(t, { title: 'T2', labels: ['api', 'web'] })).id;
  const t3 = (await createTask(t, { title: 'T3', labels: ['web'] })).id;
  advance(600);
  const l1 = await claim(t1, a);
  const l2 = await claim(t2, b);
  await ok('POST', `/api/v1/leases/${l1}/usage`, { input_tokens: 1000, output_tokens: 200, cost: 0.5 }, a.token);
  await ok('POST', `/api/v1/leases/${l2}/usage`, { input_tokens: 3000, output_tokens: 600, cost: 1.25 }, b.token);
  advance(3600);
  await ok('POST', `/api/v1/tasks/${t1}/hand_in`, { summary: 'done' }, a.token);
  await ok('POST', `/api/v1/tasks/${t2}/hand_in`, { summary: 'done' }, b.token);
  advance(1800);
  await ok('POST', `/api/v1/tasks/${t1}/review`, { decision: 'approve' });
  await ok('POST', `/api/v1/tasks/${t2}/review`, { decision: 'request_changes', comment: 'One more test, please.' });
  advance(1200);
  await ok('POST', `/api/v1/tasks/${t2}/hand_in`, { summary: 'with the test' }, b.token);
  advance(1800);
  await ok('POST', `/api/v1/tasks/${t2}/review`, { decision: 'approve' });
  const l3 = await claim(t3, a);
  await ok('POST', `/api/v1/leases/${l3}/usage`, { input_tokens: 500, tool_calls: 2 }, a.token);
  advance(600);
  await ok('POST', `/api/v1/leases/${l3}/release`, { outcome: 'failed', reason: 'flaky test', failure_code: 'test_failure' }, a.token);
  at = new Date('2026-11-21T09:00:00.000Z');
  await claim(t3, a, 60);
  advance(61);
  const sweep = await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
  expect(sweep.status, sweep.body).toBe(200);
}

async function stats(query: string, token?: string): Promise<Stats> {
  const res = await t.request('GET', `/api/v1/insight?${query}`, token ? { token } : {});
  expect(res.status, res.body).toBe(200);
  return res.json<Stats>();
}

/** A duration's figures: count, exact mean, and the bucket percentiles (edges in spec/analytics.md). */
const d = (count: number, mean: number, p50: number, p90: number): Duration => ({ count, mean, p50, p90 });
const NONE = { count: 0, mean: null, p50: null, p90: null };

describe('insight_get', () => {
  it('answers the figures counted by hand over both days', async () => {
    const s = await stats('from=2026-11-20&to=2026-11-22');
    expect(s).toMatchObject({ from: '2026-11-20', to: '2026-11-22', days: 2, groups: [], groups_truncated: false });
    expect(s.totals).toEqual({
      tasks_done: 2,
      done_per_day: 1,
      // T1 09:10→10:40 (5400 s, bucket [3600, 7200)), T2 09:10→11:30 (8400 s, bucket [7200, 14400)).
      cycle_time_s: d(2, 6900, 5400, 10800),
      // T1 09:00→10:40 (6000), T2 09:00→11:30 (9000).
      lead_time_s: d(2, 7500, 5400, 10800),
      // Three reviews of 1800 s each, all in [1800, 3600): rank 2 of 3 → 1800 + 1800 × 1.5/3.
      review_wait_s: d(3, 1800, 2700, 3300),
      time_in_status_s: {
        // 600, 600, 9000 (T3 until 11:30), 76800 (T3 from 11:40 until day 2, 09:00).
        todo: d(4, 21750, 825, 64800),
        // 3600, 3600, 1200, 600, 61 (T3's lapse, swept at 09:01:01).
        in_progress: d(5, 1812, 1350, 6300),
        in_review: d(3, 1800, 2700, 3300),
        blocked: NONE,
        done: NONE,
        cancelled: NONE,
      },
      first_review: { decided: 2, approved: 1, rate: 0.5 },
      runs: {
        ended: 5,
        failed: 2,
        failure_rate: 0.4,
        // Leases: 3600, 3600, 1200 (T2's second), 600, 60 (a lapse ends at its expiry).
        duration_s: d(5, 1812, 1350, 6300),
        failures: [
          { code: 'lapsed', count: 1 },
          { code: 'test_failure', count: 1 },
        ],
      },
      usage: {
        input_tokens: 4500,
        output_tokens: 800,
        tool_calls: 2,
        cost: [{ currency: 'USD', amount: 1.75 }],
        per_done_task: { input_tokens: 2250, output_tokens: 400, cost: [{ currency: 'USD', amount: 0.875 }] },
      },
    });
  });

  it('groups by day, agent and label, and filters by one agent or label', async () => {
    const byDay = await stats('from=2026-11-20&to=2026-11-22&by=day');
    expect(byDay.groups.map((g) => [g.key, g.figures.tasks_done, g.figures.runs.ended, g.figures.done_per_day])).toEqual([
      ['2026-11-20', 2, 4, 2],
      ['2026-11-21', 0, 1, 0],
    ]);
    const byAgent = await stats('from=2026-11-20&to=2026-11-22&by=agent');
    const agents = Object.fromEntries(byAgent.groups.map((g) => [g.key, g.figures]));
    expect(agents[a.id]).toMatchObject({ tasks_done: 1, runs: { ended: 3, failed: 2 }, usage: { input_tokens: 1500, output_tokens: 200, tool_calls: 2 }, first_review: { decided: 1, approved: 1 } });
    expect(agents[b.id]).toMatchObject({ tasks_done: 1, runs: { ended: 2, failed: 0 }, usage: { input_tokens: 3000, output_tokens: 600 }, first_review: { decided: 1, approved: 0 } });
    const byLabel = await stats('from=2026-11-20&to=2026-11-22&by=label');
    expect(byLabel.groups.map((g) => [g.key, g.figures.tasks_done, g.figures.runs.ended, g.figures.usage.input_tokens])).toEqual([
      ['api', 2, 3, 4000],
      ['web', 1, 4, 3500],
    ]);
    const onlyB = await stats(`from=2026-11-20&to=2026-11-22&agent=${b.id}`);
    expect(onlyB.totals).toEqual(agents[b.id]);
    const web = await stats('from=2026-11-20&to=2026-11-22&label=web&by=day');
    expect(web.totals.cycle_time_s).toEqual(d(1, 8400, 10800, 10800));
    expect(web.groups.map((g) => g.key)).toEqual(['2026-11-20', '2026-11-21']);
  });

  it('counts only the days of the window, [from, to)', async () => {
    const day2 = await stats('from=2026-11-21&to=2026-11-22');
    expect(day2.totals).toMatchObject({ tasks_done: 0, runs: { ended: 1, failed: 1, failures: [{ code: 'lapsed', count: 1 }] } });
    expect(day2.totals.time_in_status_s.todo).toEqual(d(1, 76800, 64800, 64800));
    const day1 = await stats('from=2026-11-20&to=2026-11-21');
    expect(day1.totals).toMatchObject({ tasks_done: 2, runs: { ended: 4, failed: 1 }, usage: { input_tokens: 4500 } });
    expect((await stats('from=2026-11-22&to=2026-11-23')).totals).toMatchObject({ tasks_done: 0, runs: { ended: 0, failure_rate: null }, usage: { per_done_task: null } });
    const defaulted = await stats('');
    expect(defaulted).toMatchObject({ from: '2026-10-23', to: '2026-11-22', days: 30, totals: { tasks_done: 2 } });
    expect((await stats('from=2026-08-24&to=2026-11-24')).days).toBe(92);
    expectProblem(await t.request('GET', '/api/v1/insight?from=2026-08-23&to=2026-11-24'), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', '/api/v1/insight?from=2026-11-22&to=2026-11-22'), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', '/api/v1/insight?from=yesterday'), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', `/api/v1/insight?agent=${a.id}&label=web`), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', `/api/v1/insight?agent=${a.id}&by=label`), 400, 'invalid_parameter');
  });

  it('is for humans, whatever their role; agents are refused', async () => {
    const viewer = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read'] });
    expect((await stats('from=2026-11-20&to=2026-11-22', viewer.token)).totals.tasks_done).toBe(2);
    expectProblem(await t.request('GET', '/api/v1/insight', { token: a.token }), 403, 'human_required');
  });

  it('answers the same over GraphQL', async () => {
    const res = await t.request('POST', '/graphql', {
      body: { query: '{ insight(from: "2026-11-20", to: "2026-11-22") { days totals { tasks_done first_review { rate } usage { cost { currency amount } } } } }' },
    });
    expect(res.status, res.body).toBe(200);
    expect(res.json()).toEqual({ data: { insight: { days: 2, totals: { tasks_done: 2, first_review: { rate: 0.5 }, usage: { cost: [{ currency: 'USD', amount: 1.75 }] } } } } });
  });

  it('buckets durations at the edges the spec lists', async () => {
    for (const [i, edge] of DURATION_EDGES_S.entries()) {
      const { rows } = await sql<{ at: number; below: number }>`SELECT baton_stat_bucket(${edge}) AS at, baton_stat_bucket(${edge - 0.5}) AS below`.execute(t.database.db);
      expect(rows[0]).toEqual({ at: i + 1, below: i });
    }
  });

  it('reads rollups counted before failure codes under the codes their kinds stand for', async () => {
    await sql`INSERT INTO stat_days (day, dim, key, metric, shard, n) VALUES ('2026-11-10', 'all', '', 'fail:expired', 0, 2), ('2026-11-10', 'all', '', 'fail:failed', 1, 1), ('2026-11-10', 'all', '', 'fail:unspecified', 2, 1)`.execute(t.database.db);
    expect((await stats('from=2026-11-10&to=2026-11-11')).totals.runs).toMatchObject({ failed: 4, failures: [{ code: 'lapsed', count: 2 }, { code: 'unspecified', count: 2 }] });
  });
});

/**
 * Concurrent writers (issue 41 §3): on 2026-11-25, 8 agents through every instance claim, report
 * usage (each report retried with its key through the other instance), hand in or fail with a code;
 * a human approves or sends back the work and cancels held tasks while agents claim more; the rest
 * lapse. Afterwards every figure equals what the raw tables and events say.
 */
describe('insight under concurrent writers', () => {
  const DAY = '2026-11-25';
  const rawCount = async <T,>(query: ReturnType<typeof sql<T>>) => (await query.execute(t.database.db)).rows;

  it('counts every status change, run, failure and report exactly once', async () => {
    at = new Date(`${DAY}T10:00:00.000Z`);
    const workers = await Promise.all(Array.from({ length: 8 }, () => t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));
    for (let i = 0; i < 20; i++) await createTask(t, { title: `flow ${i}`, labels: i % 2 === 0 ? ['flow'] : ['flow', 'hot'] });
    const sent = { input: 0, output: 0, tools: 0, cost: 0 };
    const claimOne = async (who: Principal, via: number, ttl_s = 86_400) => {
      const res = await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['flow'], ttl_s }, token: who.token, via });
      expect(res.status, res.body).toBe(200);
      const claim = res.json<{ claims: { task: { id: string }; lease: { id: string } }[] }>().claims[0];
      return claim ? { task: claim.task.id, lease: claim.lease.id } : undefined;
    };
    const work = async (who: Principal, i: number, round: number) => {
      const via = (i + round) % INSTANCES;
      const held = await claimOne(who, via);
      if (!held) return;
      const usage = { input_tokens: 100 + i, output_tokens: 10, tool_calls: 1, cost: 0.01 };
      const key = `usage-${held.lease}`;
      for (const through of [via, (via + 1) % INSTANCES]) {
        const res = await t.request('POST', `/api/v1/leases/${held.lease}/usage`, { body: usage, key, token: who.token, via: through });
        expect(res.status, res.body).toBe(200);
      }
      sent.input += usage.input_tokens;
      sent.output += usage.output_tokens;
      sent.tools += 1;
      sent.cost += 10_000;
      const end = (i + round) % 3;
      const res =
        end === 0
          ? await t.request('POST', `/api/v1/tasks/${held.task}/hand_in`, { body: { summary: 'done' }, token: who.token, via })
          : await t.request('POST', `/api/v1/leases/${held.lease}/release`, { body: { outcome: 'failed', reason: 'it broke', failure_code: end === 1 ? 'test_failure' : 'x-flaky-net' }, token: who.token, via });
      expect(res.status, res.body).toBeLessThan(300);
    };
    await Promise.all(workers.map(async (who, i) => {
      await work(who, i, 0);
      await work(who, i, 1);
    }));
    // A human reviews every hand-in while the agents claim again, with short leases: half of those
    // held are cancelled, the rest lapse.
    const inReview = (await t.request('GET', '/api/v1/tasks?status=in_review&labels=flow&limit=100')).json<{ data: { id: string; version: number }[] }>().data;
    const [, held] = await Promise.all([
      Promise.all(inReview.map((task, i) => t.request('POST', `/api/v1/tasks/${task.id}/review`, { body: i % 2 === 0 ? { decision: 'approve' } : { decision: 'request_changes', comment: 'Again, please.' }, via: i % INSTANCES }))),
      Promise.all(workers.slice(0, 4).map((who, i) => claimOne(who, i % INSTANCES, 30))),
    ]);
    const holds = held.filter((h) => h !== undefined);
    expect(holds.length).toBeGreaterThan(1);
    await Promise.all(holds.filter((_, i) => i % 2 === 0).map((h, i) => t.request('PATCH', `/api/v1/tasks/${h.task}`, { body: { status: 'cancelled' }, via: i % INSTANCES })));
    advance(60);
    const sweep = await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect(sweep.status, sweep.body).toBe(200);

    const from = `${DAY}T00:00:00Z`;
    const to = '2026-11-26T00:00:00Z';
    const moves = await rawCount(sql<{ from: string; to: string; n: number }>`
      SELECT data->>'from' AS from, data->>'to' AS to, count(*)::int AS n FROM events
      WHERE type = 'task.status_changed' AND created_at >= ${from}::timestamptz AND created_at < ${to}::timestamptz GROUP BY 1, 2`);
    const runs = await rawCount(sql<{ holder_id: string; code: string | null; n: number; input: number; output: number; tools: number; cost: number }>`
      SELECT l.holder_id, CASE WHEN l.state = 'expired' THEN 'lapsed' ELSE r.failure_code END AS code, count(*)::int AS n, coalesce(sum(r.input_tokens), 0)::int AS input,
        coalesce(sum(r.output_tokens), 0)::int AS output, coalesce(sum(r.tool_calls), 0)::int AS tools, coalesce(sum(r.cost_micros), 0)::int AS cost
      FROM leases l LEFT JOIN runs r ON r.lease_id = l.id
      WHERE l.state <> 'active' AND CASE WHEN l.state = 'expired' THEN l.expires_at ELSE l.ended_at END >= ${from}::timestamptz
        AND CASE WHEN l.state = 'expired' THEN l.expires_at ELSE l.ended_at END < ${to}::timestamptz GROUP BY 1, 2`);
    const sum = <T,>(rows: readonly T[], f: (row: T) => number) => rows.reduce((n, row) => n + f(row), 0);
    // Every report counted once, whichever instance took it or its retry.
    expect({ input: sum(runs, (r) => r.input), output: sum(runs, (r) => r.output), tools: sum(runs, (r) => r.tools), cost: sum(runs, (r) => r.cost) }).toEqual(sent);
    const byCode = new Map<string, number>();
    for (const r of runs) if (r.code) byCode.set(r.code, (byCode.get(r.code) ?? 0) + r.n);
    expect([...byCode.keys()].sort()).toEqual(['cancelled', 'lapsed', 'test_failure', 'x-flaky-net']);

    const s = await stats(`from=${DAY}&to=2026-11-26`);
    const moved = (f: (m: { from: string; to: string }) => boolean) => sum(moves.filter(f), (m) => m.n);
    expect(s.totals.tasks_done).toBe(moved((m) => m.to === 'done'));
    for (const status of ['todo', 'in_progress', 'in_review', 'cancelled']) expect(s.totals.time_in_status_s[status]?.count, status).toBe(moved((m) => m.from === status));
    expect(s.totals.review_wait_s.count).toBe(inReview.length);
    expect(s.totals.first_review).toMatchObject({ decided: inReview.length, approved: moved((m) => m.from === 'in_review' && m.to === 'done') });
    expect(s.totals.runs).toMatchObject({ ended: sum(runs, (r) => r.n), failed: sum([...byCode.values()], (n) => n) });
    expect(Object.fromEntries(s.totals.runs.failures.map((f) => [f.code, f.count]))).toEqual(Object.fromEntries(byCode));
    expect(s.totals.usage).toMatchObject({ input_tokens: sent.input, output_tokens: sent.output, tool_calls: sent.tools, cost: [{ currency: 'USD', amount: sent.cost / 1e6 }] });
    const byAgent = await stats(`from=${DAY}&to=2026-11-26&by=agent`);
    for (const who of workers) {
      const own = runs.filter((r) => r.holder_id === who.id);
      const figures = byAgent.groups.find((g) => g.key === who.id)?.figures;
      expect(figures?.runs.ended ?? 0).toBe(sum(own, (r) => r.n));
      expect(figures?.runs.failed ?? 0).toBe(sum(own.filter((r) => r.code !== null), (r) => r.n));
      expect(figures?.usage.input_tokens ?? 0).toBe(sum(own, (r) => r.input));
    }
  });
});

