/**
 * `node bench/growth.ts` (`npm run bench:growth`): does a request cost the same at a million tasks as
 * at ten thousand? It makes one fresh PostgreSQL database per size (BENCH_GROWTH_SIZES, default
 * 10000,100000,1000000), lets Baton migrate and bootstrap each, and seeds it with generated SQL (no
 * API: tasks with a realistic spread of statuses, priorities and labels, 5 % of the queue blocked by
 * an open task, leases for the tasks in progress, ten events per task), then VACUUM ANALYZE, as a
 * long-lived database would be. All sizes stay up at once, each behind its own Baton server in this
 * process, and every request kind is timed through Baton's whole HTTP stack (`app.inject`: no socket
 * noise) with the sizes interleaved: one request at 10⁴, one at 10⁵, one at 10⁶, again
 * (BENCH_GROWTH_SAMPLES rounds, default 2,000, with the order rotating), so load from elsewhere on
 * the machine hits every size alike. The kinds: GET by id (a random id over the whole table, so the
 * large sizes read outside the buffer cache as they would), a filtered list page, a `since` delta of
 * 100 events (the event list and the task list), a task's timeline page, and claim-next with and
 * without a label filter (each claim handed back untimed). It then replays each kind's SQL under
 * EXPLAIN (ANALYZE, BUFFERS) at every size (bench/growth-plans.ts) and reads the buffer cache hit
 * ratio of the timed run. It prints p50/p99 per size and the p99 ratio of the largest size to the
 * smallest (target ≤ 1.5); a full run writes bench/GROWTH.md, bench/growth.json and the chart
 * bench/growth.svg (bench/growth-chart.ts). Databases are dropped at the end, on error and on Ctrl-C
 * (BENCH_GROWTH_KEEP=1 keeps them, named in the output, to study plans by hand).
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer, type Server } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { ADMIN_URL, emptyDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { type GrowthResults, renderChart } from './growth-chart.ts';
import { explainStatements, type PlanReading, recordStatements } from './growth-plans.ts';
import { type Cache, cacheTable, latencyTable, planTable, type Readings, TARGET } from './growth-report.ts';
import { Cleanup } from './processes.ts';
import { describeMachine } from './report.ts';

const SIZES = (process.env.BENCH_GROWTH_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_GROWTH_SAMPLES ?? 2000);
/** Rounds of each kind before timing, so V8, the statement caches and the hot index pages are warm. */
const WARMUP = 50;
/** Requests of each kind replayed under EXPLAIN per size; the median reading is reported. */
const PLAN_REQUESTS = 5;
const EVENTS_PER_TASK = 10;
const LABEL = 'area-3';

/** The requests timed at every size; `path` gets a fresh random task id where it needs one. */
const KINDS = [
  { name: 'GET /tasks/{id}', method: 'GET', path: (s: Seeded) => `/tasks/${s.randomTask()}` },
  { name: `list: todo + label, page 1`, method: 'GET', path: () => `/tasks?status=todo&labels=${LABEL}&limit=25` },
  { name: 'events since (100 events)', method: 'GET', path: (s: Seeded) => `/events?since=${s.since100}&limit=100` },
  { name: 'tasks since (100 events)', method: 'GET', path: (s: Seeded) => `/tasks?since=${s.since100}&limit=25` },
  { name: 'task timeline page', method: 'GET', path: (s: Seeded) => `/tasks/${s.randomTask()}/events?order=desc&limit=25` },
  // Claims come last: their events would lengthen the `since` deltas above.
  { name: 'claim-next', method: 'POST', path: () => '/tasks/claim', body: {} },
  { name: `claim-next, label filter`, method: 'POST', path: () => '/tasks/claim', body: { labels: [LABEL] } },
] as const;
type Kind = (typeof KINDS)[number];

interface Seeded {
  readonly since100: string;
  randomTask(): string;
}

/** One seeded size, served by its own Baton. */
interface Target {
  readonly tasks: number;
  readonly url: string;
  readonly database: string;
  readonly server: Server;
  readonly seeded: Seeded;
}

const taskId = (i: number) => `tsk_${String(i).padStart(26, '0')}`;
const eventId = (seq: number) => `evt_${String(seq).padStart(26, '0')}`;

/**
 * The seed, one statement per table, all generated in the database. Statuses by a hash of the
 * index: 60 % done, 5 % cancelled, 20 % todo, 5 % in progress, 5 % in review, 5 % blocked; four
 * priorities; labels `area-0…9` and `kind-0…6` (every task one of each) and `urgent` on one in 50.
 * Every 20th todo task (all urgent, so in the way of every claim) waits on an open task. Ten events per task, in task order, over a year.
 */
const seedStatements = (tasks: number) => [
  // Sizes are numbers this script chose; the admin id is the one parameter.
  `CREATE TEMP TABLE seed AS
     SELECT i, 'tsk_' || lpad(i::text, 26, '0') AS id,
            CASE WHEN h < 60 THEN 'done' WHEN h < 65 THEN 'cancelled' WHEN h < 85 THEN 'todo'
                 WHEN h < 90 THEN 'in_progress' WHEN h < 95 THEN 'in_review' ELSE 'blocked' END AS status,
            now() - interval '365 days' * (1 - i::float / ${tasks}) AS created_at
     FROM generate_series(1, ${tasks}) AS i, LATERAL (SELECT (i::bigint * 2654435761) % 100 AS h) AS x`,
  `INSERT INTO tasks (id, title, description, status, priority, labels, blocked_by, created_at, created_by_id, created_by_kind,
                      updated_at, updated_by_id, updated_by_kind, lease_id, lease_holder_id, lease_holder_kind, lease_expires_at, lease_epoch)
   SELECT id, 'Task ' || i || ': ' || (ARRAY['fix', 'build', 'review', 'write', 'migrate'])[1 + i % 5] || ' the '
              || (ARRAY['parser', 'billing page', 'login flow', 'importer', 'docs'])[1 + (i / 5) % 5],
          repeat('Steps, context and acceptance criteria. ', 1 + i % 8),
          status, (i * 7) % 4,
          ARRAY['area-' || (i % 10), 'kind-' || (i % 7)] || CASE WHEN i % 50 = 0 THEN ARRAY['urgent'] ELSE '{}'::text[] END,
          CASE WHEN status = 'todo' AND i % 20 = 1 THEN ARRAY[(SELECT id FROM seed WHERE status = 'in_progress' ORDER BY i LIMIT 1)] ELSE '{}'::text[] END,
          created_at, $1::text, 'human', created_at + interval '1 hour', $1::text, 'human',
          NULL,
          CASE WHEN status = 'in_progress' THEN $1::text END,
          CASE WHEN status = 'in_progress' THEN 'human' END,
          CASE WHEN status = 'in_progress' THEN now() + interval '30 days' END,
          CASE WHEN status = 'in_progress' THEN 1 ELSE 0 END
   FROM seed`,
  `INSERT INTO leases (id, task_id, holder_id, holder_kind, epoch, ttl_s, state, acquired_at, renewed_at, expires_at, created_at, created_by_id, created_by_kind)
   SELECT 'lea_' || lpad(i::text, 26, '0'), id, $1::text, 'human', 1, 3600, 'active', now(), now(), now() + interval '30 days', now(), $1::text, 'human'
   FROM seed WHERE status = 'in_progress'`,
  // Tasks and leases point at each other: the lease ids go in once both rows exist.
  `UPDATE tasks SET lease_id = 'lea_' || substr(id, 5) WHERE status = 'in_progress'`,
  `INSERT INTO events (seq, id, type, subject, actor_id, actor_kind, data, created_at)
   SELECT s.i * ${EVENTS_PER_TASK} + j, 'evt_' || lpad((s.i * ${EVENTS_PER_TASK} + j)::text, 26, '0'),
          (ARRAY['task.created', 'task.updated', 'task.updated', 'task.claimed', 'lease.renewed', 'lease.renewed',
                 'task.status_changed', 'task.updated', 'lease.released', 'task.status_changed'])[j + 1],
          s.id, $1::text, 'human', jsonb_build_object('step', j, 'note', 'seeded'), s.created_at + interval '1 minute' * j
   FROM seed AS s, generate_series(0, ${EVENTS_PER_TASK - 1}) AS j
   -- Stored in sequence order, as appended events are: without it the planner may loop over j
   -- outside, and a run of 100 events then sits on 100 pages instead of a few.
   ORDER BY s.i, j`,
];


async function seed(url: string, tasks: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const admin = (await client.query<{ id: string }>(`SELECT id FROM agents WHERE kind = 'human' ORDER BY id LIMIT 1`)).rows[0]?.id;
    if (!admin) throw new Error('no bootstrap admin in the fresh database');
    for (const statement of seedStatements(tasks)) await client.query(statement, statement.includes('$1') ? [admin] : []);
    // Sets hint bits and the visibility map as autovacuum would have long since in a real database,
    // so the first timed read of a page does not pay for writing them.
    await client.query('VACUUM ANALYZE');
  } finally {
    await client.end();
  }
}

async function prepare(tasks: number, token: string, cleanup: Cleanup): Promise<Target> {
  const database = await emptyDatabase(`baton_growth_${tasks}_${process.pid}`, process.env.BENCH_GROWTH_KEEP === '1' ? new Cleanup() : cleanup);
  process.stderr.write(`growth: ${tasks} tasks in database ${database.name} on ${new URL(ADMIN_URL).host}\n`);
  // No lease sweeps or webhook polls: their statements would land among a request's in the plan
  // check, and the timed requests are what is compared.
  const server = await createServer(
    loadConfig({ DATABASE_URL: database.url, BATON_BOOTSTRAP_TOKEN: token, BATON_RATE_LIMIT: RATE_LIMIT, BATON_LOG_LEVEL: 'warn', BATON_SWEEP_INTERVAL_MS: '0', BATON_WEBHOOK_INTERVAL_MS: '0' }),
  );
  const started = Date.now();
  await seed(database.url, tasks);
  process.stderr.write(`  ${tasks} tasks, ${tasks * EVENTS_PER_TASK} events seeded and vacuumed in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  const seeded: Seeded = {
    since100: eventId(tasks * EVENTS_PER_TASK + EVENTS_PER_TASK - 1 - 100),
    randomTask: () => taskId(1 + Math.floor(Math.random() * tasks)),
  };
  return { tasks, url: database.url, database: database.name, server, seeded };
}

/** Sends one request of `kind`; answers its time and, for a claim, the lease to hand back. */
async function send(target: Target, token: string, kind: Kind): Promise<{ ms: number; lease?: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (kind.method === 'POST') Object.assign(headers, { 'idempotency-key': randomUUID(), 'content-type': 'application/json' });
  const url = `/api/v1${kind.path(target.seeded)}`;
  const started = process.hrtime.bigint();
  const res = await target.server.app.inject({ method: kind.method, url, headers, ...('body' in kind ? { payload: JSON.stringify(kind.body) } : {}) });
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (res.statusCode !== 200) throw new Error(`${kind.name} at ${target.tasks}: ${res.statusCode} ${res.body}`);
  if (kind.method === 'GET') return { ms };
  const claim = (JSON.parse(res.body) as { claims: { lease: { id: string } }[] }).claims[0];
  if (!claim) throw new Error(`${kind.name} at ${target.tasks}: claimed nothing`);
  return { ms, lease: claim.lease.id };
}

/** Hands a claim back, so every claim finds the same queue and a small size never runs dry. */
async function release(target: Target, token: string, lease: string | undefined): Promise<void> {
  if (!lease) return;
  const headers = { authorization: `Bearer ${token}`, 'idempotency-key': randomUUID(), 'content-type': 'application/json' };
  const res = await target.server.app.inject({ method: 'POST', url: `/api/v1/leases/${lease}/release`, headers, payload: '{}' });
  if (res.statusCode !== 200) throw new Error(`release at ${target.tasks}: ${res.statusCode} ${res.body}`);
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

/** Times `kind` at every size, interleaved: each round sends one request per size, starting one size further on each time. */
async function timeKind(targets: readonly Target[], token: string, kind: Kind): Promise<Map<Target, { p50: number; p99: number }>> {
  const times = new Map(targets.map((target) => [target, [] as number[]]));
  for (let round = 0; round < WARMUP + SAMPLES; round++) {
    for (let i = 0; i < targets.length; i++) {
      const target = targets[(round + i) % targets.length] as Target;
      const { ms, lease } = await send(target, token, kind);
      await release(target, token, lease);
      if (round >= WARMUP) times.get(target)?.push(ms);
    }
  }
  return new Map(
    [...times].map(([target, sample]) => {
      sample.sort((a, b) => a - b);
      return [target, { p50: percentile(sample, 50), p99: percentile(sample, 99) }];
    }),
  );
}

/** The median (by buffers touched) of PLAN_REQUESTS requests of `kind` replayed under EXPLAIN at `target`. */
async function planKind(target: Target, token: string, kind: Kind): Promise<PlanReading> {
  const readings: PlanReading[] = [];
  for (let i = 0; i < PLAN_REQUESTS; i++) {
    let lease: string | undefined;
    const statements = await recordStatements(async () => {
      lease = (await send(target, token, kind)).lease;
    });
    readings.push(await explainStatements(target.url, statements));
    await release(target, token, lease);
  }
  readings.sort((a, b) => a.buffers - b.buffers);
  return readings[Math.floor(readings.length / 2)] as PlanReading;
}

/** The database's size and its shared-buffer hits and reads since `pg_stat_reset()`. */
async function cacheReading(url: string): Promise<{ bytes: number; hit: number; read: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ bytes: string; hit: string; read: string }>(
      'SELECT pg_database_size(datname) AS bytes, blks_hit AS hit, blks_read AS read FROM pg_stat_database WHERE datname = current_database()',
    );
    const row = rows[0];
    return { bytes: Number(row?.bytes), hit: Number(row?.hit), read: Number(row?.read) };
  } finally {
    await client.end();
  }
}

async function resetStatistics(target: Target): Promise<void> {
  const client = new pg.Client({ connectionString: target.url });
  await client.connect();
  await client.query('SELECT pg_stat_reset()').finally(() => client.end());
}

async function main(): Promise<void> {
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  const began = Date.now();
  const targets: Target[] = [];
  try {
    const machine = await describeMachine(await postgresVersion());
    const token = generateToken();
    for (const tasks of SIZES) targets.push(await prepare(tasks, token, cleanup));
    const seedS = (Date.now() - began) / 1000;

    // Plans first: the replays run in rolled-back transactions, and the cache counts that follow are the timed run's alone.
    const plans: Readings = {};
    for (const kind of KINDS) {
      const bySize: Record<string, PlanReading> = {};
      for (const target of targets) bySize[String(target.tasks)] = await planKind(target, token, kind);
      plans[kind.name] = bySize;
    }
    for (const target of targets) await resetStatistics(target);

    const timed = Date.now();
    const results: GrowthResults = { sizes: SIZES, bySize: Object.fromEntries(SIZES.map((n) => [String(n), {}])) };
    for (const kind of KINDS) {
      const byTarget = await timeKind(targets, token, kind);
      for (const [target, reading] of byTarget) (results.bySize[String(target.tasks)] ?? {})[kind.name] = reading;
      process.stderr.write(`  ${kind.name}: timed, ${((Date.now() - timed) / 1000).toFixed(0)} s so far\n`);
    }
    const timedS = (Date.now() - timed) / 1000;
    const loadAfter = loadavg().map((l) => l.toFixed(2)).join(' / ');

    // Closing the servers ends their backends, which flushes their statistics.
    const closed = targets.splice(0);
    await Promise.all(closed.map((target) => target.server.close()));
    await sleep(1000);
    const cache: Cache = {};
    for (const target of closed) cache[String(target.tasks)] = await cacheReading(target.url);

    const latency = latencyTable(results);
    const planText = planTable(SIZES, plans);
    const cacheText = cacheTable(SIZES, cache);
    process.stdout.write(`${latency}\n\n${planText}\n\n${cacheText}\n`);
    const full = SIZES.join(',') === '10000,100000,1000000' && SAMPLES >= 2000;
    if (!full) return void process.stderr.write('(a reduced run: bench/GROWTH.md, bench/growth.json and bench/growth.svg are left as they are)\n');
    const when = new Date().toISOString().slice(0, 16).replace('T', ' ');
    await writeFile(new URL('growth.svg', import.meta.url), renderChart(results));
    await writeFile(new URL('growth.json', import.meta.url), `${JSON.stringify({ ...results, samples: SAMPLES, warmup: WARMUP, seedS, timedS, plans, cache }, null, 2)}\n`);
    await writeFile(
      new URL('GROWTH.md', import.meta.url),
      [
        '# Growth: cost per request at 10⁴, 10⁵ and 10⁶ tasks',
        '',
        `Written by \`node bench/growth.ts\` on ${when} UTC, Baton ${machine.revision}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}; load ${machine.load} before the run and ${loadAfter} (1 / 5 / 15 min) after it. Seeding took ${seedS.toFixed(0)} s, timing ${timedS.toFixed(0)} s.`,
        '',
        `All three databases are up at once; each request kind is timed ${SAMPLES} times per size after ${WARMUP} warm-up rounds, with the sizes interleaved (one request at each size per round, the order rotating), so load from elsewhere on the machine falls on every size alike. Requests go through Baton's HTTP stack in process; GET and timeline ids are random over the whole table; ten events per task. Target: every p99 at 10⁶ ≤ ${TARGET}× its p99 at 10⁴.`,
        '',
        latency,
        '',
        '![p99 by size](growth.svg)',
        '',
        `Shared buffers touched per request by its statements, replayed under \`EXPLAIN (ANALYZE, BUFFERS)\` (hit or read; the median of ${PLAN_REQUESTS} requests), and whether the plans (node types and indexes, statement by statement; in growth.json) are the same at every size:`,
        '',
        planText,
        '',
        'The buffer cache over the timed run:',
        '',
        cacheText,
        '',
      ].join('\n'),
    );
  } finally {
    await Promise.all(targets.map((target) => target.server.close()));
    await cleanup.run();
  }
}

await main();
