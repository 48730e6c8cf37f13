/**
 * `node bench/growth.ts` (`npm run bench:growth`): does a request cost the same at a million tasks as
 * at ten thousand? For each size (BENCH_GROWTH_SIZES, default 10000,100000,1000000) it makes a fresh
 * PostgreSQL database, lets Baton migrate and bootstrap it, seeds it with generated SQL (no API:
 * tasks with a realistic spread of statuses, priorities and labels, 5 % of the queue blocked by an
 * open task, leases for the tasks in progress, ten events per task), ANALYZEs it, then times
 * BENCH_GROWTH_SAMPLES (default 300) sequential requests of each kind through Baton's whole HTTP
 * stack (`app.inject`, in process: no socket noise): GET by id, a filtered list page, a `since`
 * delta of 100 events (the event list and the task list), a task's timeline page, and claim-next
 * with and without a label filter (each claim released again, untimed). It prints p50/p99 per
 * size and the p99 ratio of the largest size to the smallest (target ≤ 1.5), and writes
 * bench/GROWTH.md and the chart bench/growth.svg (bench/growth-chart.ts). Databases are dropped at the end, on error and on Ctrl-C.
 */
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer, type Server } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { ADMIN_URL, emptyDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { type GrowthResults, renderChart } from './growth-chart.ts';
import { Cleanup } from './processes.ts';
import { describeMachine } from './report.ts';

const SIZES = (process.env.BENCH_GROWTH_SIZES ?? '10000,100000,1000000').split(',').map(Number);
const SAMPLES = Number(process.env.BENCH_GROWTH_SAMPLES ?? 300);
/** Requests of each kind before timing, so V8 and the statement caches are warm. */
const WARMUP = 30;
const EVENTS_PER_TASK = 10;
const TARGET = 1.5;
const LABEL = 'area-3';

/** The requests timed at every size; `path` gets a fresh random task id where it needs one. */
const KINDS = [
  { name: 'GET /tasks/{id}', method: 'GET', path: (s: Seeded) => `/tasks/${s.randomTask()}` },
  { name: `list: todo + label, page 1`, method: 'GET', path: () => `/tasks?status=todo&labels=${LABEL}&limit=25` },
  { name: 'events since (100 events)', method: 'GET', path: (s: Seeded) => `/events?since=${s.since100}&limit=100` },
  { name: 'tasks since (100 events)', method: 'GET', path: (s: Seeded) => `/tasks?since=${s.since100}&limit=25` },
  { name: 'task timeline page', method: 'GET', path: (s: Seeded) => `/tasks/${s.randomTask()}/events?order=desc&limit=25` },
  { name: 'claim-next', method: 'POST', path: () => '/tasks/claim', body: {} },
  { name: `claim-next, label filter`, method: 'POST', path: () => '/tasks/claim', body: { labels: [LABEL] } },
] as const;

interface Seeded {
  readonly since100: string;
  randomTask(): string;
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
   FROM seed AS s, generate_series(0, ${EVENTS_PER_TASK - 1}) AS j`,
];

async function seed(url: string, tasks: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const admin = (await client.query<{ id: string }>(`SELECT id FROM agents WHERE kind = 'human' ORDER BY id LIMIT 1`)).rows[0]?.id;
    if (!admin) throw new Error('no bootstrap admin in the fresh database');
    for (const statement of seedStatements(tasks)) await client.query(statement, statement.includes('$1') ? [admin] : []);
    await client.query('ANALYZE');
  } finally {
    await client.end();
  }
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function timeKind(server: Server, token: string, seeded: Seeded, kind: (typeof KINDS)[number]): Promise<{ p50: number; p99: number }> {
  const once = async () => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (kind.method === 'POST') Object.assign(headers, { 'idempotency-key': randomUUID(), 'content-type': 'application/json' });
    const started = process.hrtime.bigint();
    const res = await server.app.inject({ method: kind.method, url: `/api/v1${kind.path(seeded)}`, headers, ...('body' in kind ? { payload: JSON.stringify(kind.body) } : {}) });
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    if (res.statusCode !== 200) throw new Error(`${kind.name}: ${res.statusCode} ${res.body}`);
    if (kind.method === 'POST') {
      // Handed back untimed, so every claim finds the same queue and a small size never runs dry.
      const claim = (JSON.parse(res.body) as { claims: { lease: { id: string } }[] }).claims[0];
      if (!claim) throw new Error(`${kind.name}: claimed nothing`);
      const released = await server.app.inject({ method: 'POST', url: `/api/v1/leases/${claim.lease.id}/release`, headers: { ...headers, 'idempotency-key': randomUUID() }, payload: '{}' });
      if (released.statusCode !== 200) throw new Error(`release: ${released.statusCode} ${released.body}`);
    }
    return ms;
  };
  for (let i = 0; i < WARMUP; i++) await once();
  const times: number[] = [];
  for (let i = 0; i < SAMPLES; i++) times.push(await once());
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

async function measureSize(tasks: number, cleanup: Cleanup): Promise<Record<string, { p50: number; p99: number }>> {
  // BENCH_GROWTH_KEEP=1 keeps the seeded databases (named in the output) to study plans with EXPLAIN.
  const database = await emptyDatabase(`baton_growth_${tasks}_${process.pid}`, process.env.BENCH_GROWTH_KEEP === '1' ? new Cleanup() : cleanup);
  process.stderr.write(`  database ${database.name}\n`);
  const token = generateToken();
  const server = await createServer(loadConfig({ DATABASE_URL: database.url, BATON_BOOTSTRAP_TOKEN: token, BATON_RATE_LIMIT: RATE_LIMIT, BATON_LOG_LEVEL: 'warn' }));
  try {
    const started = Date.now();
    await seed(database.url, tasks);
    process.stderr.write(`  ${tasks} tasks, ${tasks * EVENTS_PER_TASK} events seeded in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    const seeded: Seeded = {
      since100: eventId(tasks * EVENTS_PER_TASK + EVENTS_PER_TASK - 1 - 100),
      randomTask: () => taskId(1 + Math.floor(Math.random() * tasks)),
    };
    const result: Record<string, { p50: number; p99: number }> = {};
    for (const kind of KINDS) result[kind.name] = await timeKind(server, token, seeded, kind);
    return result;
  } finally {
    await server.close();
  }
}

function table(results: GrowthResults): string {
  const sizes = results.sizes;
  const first = sizes[0] ?? 0;
  const last = sizes.at(-1) ?? 0;
  const head = `| request | ${sizes.map((n) => `${n.toLocaleString('en')} p50 / p99 ms`).join(' | ')} | p99 ratio ${last.toLocaleString('en')} / ${first.toLocaleString('en')} |`;
  const rule = `|---|${sizes.map(() => '---:').join('|')}|---:|`;
  const rows = Object.keys(results.bySize[String(first)] ?? {}).map((kind) => {
    const cells = sizes.map((n) => {
      const r = results.bySize[String(n)]?.[kind];
      return r ? `${r.p50.toFixed(1)} / ${r.p99.toFixed(1)}` : '–';
    });
    const ratio = (results.bySize[String(last)]?.[kind]?.p99 ?? Number.NaN) / (results.bySize[String(first)]?.[kind]?.p99 ?? Number.NaN);
    return `| ${kind} | ${cells.join(' | ')} | ${ratio.toFixed(2)}${ratio > TARGET ? ' (over 1.5)' : ''} |`;
  });
  return [head, rule, ...rows].join('\n');
}

async function main(): Promise<void> {
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    const machine = await describeMachine(await postgresVersion());
    const results: GrowthResults = { sizes: SIZES, bySize: {} };
    for (const tasks of SIZES) {
      process.stderr.write(`growth: ${tasks} tasks on ${new URL(ADMIN_URL).host}\n`);
      results.bySize[String(tasks)] = await measureSize(tasks, cleanup);
      await cleanup.run();
    }
    const text = table(results);
    process.stdout.write(`${text}\n`);
    const full = SIZES.join(',') === '10000,100000,1000000' && SAMPLES >= 300;
    if (!full) return void process.stderr.write('(a reduced run: bench/GROWTH.md and bench/growth.svg are left as they are)\n');
    const when = new Date().toISOString().slice(0, 10);
    await writeFile(new URL('growth.svg', import.meta.url), renderChart(results));
    await writeFile(new URL('growth.json', import.meta.url), `${JSON.stringify(results, null, 2)}\n`);
    await writeFile(
      new URL('GROWTH.md', import.meta.url),
      `# Growth: cost per request at 10⁴, 10⁵ and 10⁶ tasks\n\nWritten by \`node bench/growth.ts\` on ${when}, Baton ${machine.revision}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load ${machine.load} before the run. ${SAMPLES} sequential requests of each kind after ${WARMUP} warm-up, through Baton's HTTP stack in process; ten events per task. Target: every p99 at 10⁶ ≤ ${TARGET}× its p99 at 10⁴.\n\n${text}\n\n![p99 by size](growth.svg)\n`,
    );
  } finally {
    await cleanup.run();
  }
}

await main();
