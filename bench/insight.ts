/**
 * `node bench/insight.ts` (`npm run bench:insight`): does `insight_get` answer within 200 ms at 10⁶
 * tasks and 10⁷ events (issue 41 §3)? It makes one fresh PostgreSQL database, lets Baton migrate and
 * bootstrap it, and seeds it with generated SQL, triggers off for speed: BENCH_INSIGHT_TASKS tasks
 * (default 1,000,000) created over a year, with labels and holders spread over BENCH_INSIGHT_AGENTS
 * agents (default 50), ten events each; and the rollup rows (`stat_days`) such a year leaves: every
 * day, every metric, for everyone (4 shards), each agent and each of the 17 labels, the duration
 * metrics with all 21 buckets filled. The answer reads only those rows, so their count is what the
 * timing depends on; the tasks and events are there so that the database is the size the target
 * names. Then VACUUM ANALYZE, and each query kind is timed through Baton's whole HTTP stack
 * (`app.inject`) BENCH_INSIGHT_SAMPLES times (default 300) after a warm-up, printing p50 and p99.
 * The database is dropped at the end (BENCH_INSIGHT_KEEP=1 keeps it).
 */
import { availableParallelism } from 'node:os';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { ADMIN_URL, emptyDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { Cleanup } from './processes.ts';
import { describeMachine } from './report.ts';

const TASKS = Number(process.env.BENCH_INSIGHT_TASKS ?? 1_000_000);
const AGENTS = Number(process.env.BENCH_INSIGHT_AGENTS ?? 50);
const SAMPLES = Number(process.env.BENCH_INSIGHT_SAMPLES ?? 300);
const WARMUP = 20;
const EVENTS_PER_TASK = 10;
const DAYS = 365;
/** The metrics a busy day writes: counters, then durations (which carry buckets). */
const COUNTERS = ['done', 'first_review', 'first_pass', 'fail:failed', 'fail:expired', 'input_tokens', 'output_tokens', 'tool_calls', 'cost:USD'];
const DURATIONS = ['cycle', 'lead', 'review_wait', 'runs', 'in:todo', 'in:in_progress', 'in:in_review', 'in:blocked'];

const seedStatements = (tasks: number, agents: number) => [
  `CREATE TEMP TABLE seed AS
     SELECT i, 'tsk_' || lpad(i::text, 26, '0') AS id,
            CASE WHEN h < 60 THEN 'done' WHEN h < 65 THEN 'cancelled' WHEN h < 85 THEN 'todo'
                 WHEN h < 90 THEN 'in_progress' WHEN h < 95 THEN 'in_review' ELSE 'blocked' END AS status,
            now() - interval '365 days' * (1 - i::float / ${tasks}) AS created_at
     FROM generate_series(1, ${tasks}) AS i, LATERAL (SELECT (i::bigint * 2654435761) % 100 AS h) AS x`,
  `INSERT INTO tasks (id, title, status, priority, labels, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
   SELECT id, 'Task ' || i, status, i % 4, ARRAY['area-' || (i % 10), 'kind-' || (i % 7)], created_at, $1::text, 'human', created_at + interval '1 hour', $1::text, 'human'
   FROM seed`,
  `INSERT INTO events (seq, id, type, subject, actor_id, actor_kind, data, created_at)
   SELECT s.i * ${EVENTS_PER_TASK} + j, 'evt_' || lpad((s.i * ${EVENTS_PER_TASK} + j)::text, 26, '0'),
          (ARRAY['task.created', 'task.updated', 'task.claimed', 'lease.renewed', 'run.logged', 'lease.renewed',
                 'task.status_changed', 'task.updated', 'lease.released', 'task.status_changed'])[j + 1],
          s.id, $1::text, 'human', jsonb_build_object('step', j), s.created_at + interval '1 minute' * j
   FROM seed AS s, generate_series(0, ${EVENTS_PER_TASK - 1}) AS j ORDER BY s.i, j`,
  // The keys a year of rollups has: everyone (4 shards), each agent, each label; every metric every day.
  `CREATE TEMP TABLE dims AS
     SELECT 'all' AS dim, '' AS key, s AS shard FROM generate_series(0, 3) AS s
     UNION ALL SELECT 'agent', 'agt_' || lpad(a::text, 26, '0'), 0 FROM generate_series(1, ${agents}) AS a
     UNION ALL SELECT 'label', 'area-' || l, 0 FROM generate_series(0, 9) AS l
     UNION ALL SELECT 'label', 'kind-' || l, 0 FROM generate_series(0, 6) AS l`,
  `INSERT INTO stat_days (day, dim, key, metric, shard, n, total, b01, b02, b03, b04, b05, b06, b07, b08, b09, b10, b11, b12, b13, b14, b15, b16, b17, b18, b19, b20, b21)
   SELECT (now() AT TIME ZONE 'UTC')::date - d, dims.dim, dims.key, m.metric, dims.shard, n, n * 3600,
          CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 1 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 2 ELSE 0 END, CASE WHEN m.duration THEN n / 21 + 0 ELSE 0 END
   FROM generate_series(0, ${DAYS - 1}) AS d, dims,
        (SELECT unnest($1::text[]) AS metric, false AS duration UNION ALL SELECT unnest($2::text[]), true) AS m,
        LATERAL (SELECT 20 + (d * 7 + length(dims.key) + length(m.metric)) % 50 AS n) AS x`,
];

const KINDS = [
  { name: '92 days, totals', query: 'from=%FROM92%' },
  { name: '92 days, by day', query: 'from=%FROM92%&by=day' },
  { name: '92 days, by agent', query: 'from=%FROM92%&by=agent' },
  { name: '92 days, by label', query: 'from=%FROM92%&by=label' },
  { name: '92 days, one agent by day', query: 'from=%FROM92%&by=day&agent=agt_00000000000000000000000007' },
  { name: '30 days (default), totals', query: '' },
];

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function main(): Promise<void> {
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    const token = generateToken();
    const database = await emptyDatabase(`baton_insight_${process.pid}`, process.env.BENCH_INSIGHT_KEEP === '1' ? new Cleanup() : cleanup);
    process.stderr.write(`insight: ${TASKS} tasks in database ${database.name} on ${new URL(ADMIN_URL).host}\n`);
    const server = await createServer(
      loadConfig({ DATABASE_URL: database.url, BATON_BOOTSTRAP_TOKEN: token, BATON_RATE_LIMIT: RATE_LIMIT, BATON_LOG_LEVEL: 'warn', BATON_SWEEP_INTERVAL_MS: '0', BATON_WEBHOOK_INTERVAL_MS: '0' }),
    );
    cleanup.add(() => server.close());
    const started = Date.now();
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    let counts: { tasks: string; events: string; rollups: string };
    try {
      const admin = (await client.query<{ id: string }>(`SELECT id FROM agents WHERE kind = 'human' ORDER BY id LIMIT 1`)).rows[0]?.id;
      if (!admin) throw new Error('no bootstrap admin in the fresh database');
      // A bulk seed, not Baton's writes: without triggers (the rollups are seeded as a year of them would leave them).
      await client.query(`SET session_replication_role = replica`);
      for (const statement of seedStatements(TASKS, AGENTS)) {
        const parameters: unknown[] = statement.includes('$2') ? [COUNTERS, DURATIONS] : statement.includes('$1') ? [admin] : [];
        await client.query(statement, parameters);
      }
      await client.query('VACUUM ANALYZE');
      counts = (
        await client.query<{ tasks: string; events: string; rollups: string }>(
          `SELECT (SELECT count(*) FROM tasks)::text AS tasks, (SELECT count(*) FROM events)::text AS events, (SELECT count(*) FROM stat_days)::text AS rollups`,
        )
      ).rows[0] as { tasks: string; events: string; rollups: string };
    } finally {
      await client.end();
    }
    const seedS = (Date.now() - started) / 1000;
    process.stderr.write(`  ${counts.tasks} tasks, ${counts.events} events, ${counts.rollups} rollup rows seeded and vacuumed in ${seedS.toFixed(0)} s\n`);

    const today = new Date();
    const from92 = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate() - 91)).toISOString().slice(0, 10);
    const lines: string[] = [];
    for (const kind of KINDS) {
      const url = `/api/v1/insight?${kind.query.replace('%FROM92%', from92)}`;
      const times: number[] = [];
      for (let i = 0; i < WARMUP + SAMPLES; i++) {
        const t0 = process.hrtime.bigint();
        const res = await server.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });
        const ms = Number(process.hrtime.bigint() - t0) / 1e6;
        if (res.statusCode !== 200) throw new Error(`${kind.name}: ${res.statusCode} ${res.body}`);
        if (i >= WARMUP) times.push(ms);
      }
      times.sort((a, b) => a - b);
      lines.push(`| ${kind.name} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`);
      process.stderr.write(`  ${kind.name}: p50 ${percentile(times, 50).toFixed(1)} ms, p99 ${percentile(times, 99).toFixed(1)} ms\n`);
    }
    const machine = await describeMachine(await postgresVersion());
    process.stdout.write(
      [
        `insight_get on ${counts.tasks} tasks, ${counts.events} events, ${counts.rollups} rollup rows (${DAYS} days, ${AGENTS} agents, 17 labels); ${SAMPLES} requests per kind after ${WARMUP} warm-up, through app.inject`,
        `${new Date().toISOString().slice(0, 16)} UTC, Baton ${machine.revision}; ${availableParallelism()} cores (${machine.cpu}), Node ${machine.node}, ${machine.postgres}; load ${machine.load} before; seeding ${seedS.toFixed(0)} s`,
        '',
        '| query | p50 ms | p99 ms |',
        '|---|---:|---:|',
        ...lines,
        '',
      ].join('\n'),
    );
  } finally {
    await cleanup.run();
  }
}

await main();
