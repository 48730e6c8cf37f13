/**
 * `node bench/cycle-breakdown.ts [--cycles=200]`
 *
 * Where the milliseconds of one work cycle go: Baton in this process (`app.inject`, no socket) on a
 * fresh PostgreSQL database seeded with todo tasks, one agent cycling `--cycles` times with
 * `leases_cycle` (hand in + claim next), then as many batches of 16 with `leases_cycle_many`. Every
 * statement's round trip (sent to answered, as pg's client sees it) is timed and summed by
 * statement; what is left of the request's time is Baton's own work in process (routing,
 * validation, auth, shaping, JSON). One agent at a time, so each number is a latency, not a
 * share of a saturated machine; the peers' throughput is in bench/PEERS.md. Last, the same for
 * pg-boss (bench/peers.ts's peer): one loop of `fetch` + `complete`, batch 1 then 16, each call timed.
 */
import { parseArgs } from 'node:util';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { seedTodoTasks } from './claims-statements.ts';
import { emptyDatabase, freshDatabase, RATE_LIMIT } from './databases.ts';
import { Cleanup } from './processes.ts';

const BATCH = 16;
const TOKEN_TOUCH = 'token last-used touch';

interface Timing {
  requests: number;
  requestMs: number;
  statements: Map<string, { count: number; ms: number }>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { cycles: { type: 'string', default: '200' } } });
  const cycles = Number(values.cycles);
  if (!(Number.isInteger(cycles) && cycles > 0)) throw new Error('--cycles must be a positive integer');
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  const token = generateToken();
  try {
    const database = await freshDatabase('postgres', `baton_bench_breakdown_${Date.now()}`, token, cleanup);
    await seedTodoTasks(database.url, (cycles + 25) * (BATCH + 1) + 100);
    const server = await createServer(
      loadConfig({ DATABASE_URL: database.url, BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: '2', BATON_RATE_LIMIT: RATE_LIMIT, BATON_SWEEP_INTERVAL_MS: '0', BATON_WEBHOOK_INTERVAL_MS: '0', BATON_LOG_LEVEL: 'warn' }),
    );
    cleanup.add(() => server.close());
    let keys = 0;
    let timing: Timing | undefined;
    const restore = timeStatements(() => timing);
    cleanup.add(async () => restore());
    const post = async (url: string, body: object): Promise<{ claims: { lease: { id: string } }[] }> => {
      const started = performance.now();
      const response = await server.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': `breakdown-${keys++}` }, payload: JSON.stringify(body) });
      if (timing) {
        timing.requests++;
        timing.requestMs += performance.now() - started;
      }
      if (response.statusCode !== 200) throw new Error(`POST ${url} answered ${response.statusCode}: ${response.body.slice(0, 500)}`);
      return response.json();
    };
    for (const batch of [1, BATCH]) {
      let held = (await post('/api/v1/tasks/claim', { limit: batch })).claims.map((c) => c.lease.id);
      const cycle = () =>
        batch === 1 ? post(`/api/v1/leases/${held[0] ?? ''}/cycle`, { summary: 'done' }) : post('/api/v1/leases/cycle', { leases: held.map((id) => ({ id, summary: 'done' })) });
      // A few untimed cycles first: V8 compiles, pg prepares its named statements.
      for (let i = 0; i < 20; i++) held = (await cycle()).claims.map((c) => c.lease.id);
      timing = { requests: 0, requestMs: 0, statements: new Map() };
      for (let i = 0; i < cycles; i++) held = (await cycle()).claims.map((c) => c.lease.id);
      process.stdout.write(`\n${report(timing, batch)}\n`);
      timing = undefined;
    }
    restore();
    process.stdout.write(`\n${await pgBoss(cycles, cleanup)}\n`);
  } finally {
    await cleanup.run();
  }
}

/** pg-boss's fetch + complete, one loop, batch 1 and 16: the mean ms of each call. */
async function pgBoss(cycles: number, cleanup: Cleanup): Promise<string> {
  const database = await emptyDatabase(`baton_bench_breakdown_boss_${Date.now()}`, cleanup);
  const boss = new PgBoss({ connectionString: database.url, max: 2, schedule: false, supervise: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    return await timeBoss(boss, cycles);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

async function timeBoss(boss: PgBoss, cycles: number): Promise<string> {
  await boss.createQueue('breakdown');
  await boss.insert('breakdown', Array.from({ length: (cycles + 25) * (BATCH + 1) }, (_, n) => ({ data: { n } })));
  const lines = ['| pg-boss, one loop | fetch ms a call | complete ms a call | ms a job |', '|---|---:|---:|---:|'];
  for (const batch of [1, BATCH]) {
    let fetchMs = 0;
    let completeMs = 0;
    for (let i = 0; i < cycles + 20; i++) {
      const t0 = performance.now();
      const jobs = await boss.fetch('breakdown', { batchSize: batch });
      const t1 = performance.now();
      await boss.complete('breakdown', jobs.map((job) => job.id));
      const t2 = performance.now();
      if (jobs.length !== batch) throw new Error(`pg-boss fetched ${jobs.length} of ${batch}`);
      // The first 20 warm up, as Baton's.
      if (i < 20) continue;
      fetchMs += t1 - t0;
      completeMs += t2 - t1;
    }
    lines.push(`| fetch ${batch} + complete ${batch} | ${(fetchMs / cycles).toFixed(2)} | ${(completeMs / cycles).toFixed(2)} | ${((fetchMs + completeMs) / cycles / batch).toFixed(2)} |`);
  }
  return lines.join('\n');
}

/** Wraps pg's `Client#query` to time each statement while `current()` gives a timing; returns the undo. */
function timeStatements(current: () => Timing | undefined): () => void {
  const client = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const query = client.query;
  client.query = function (this: unknown, ...args: unknown[]) {
    const timing = current();
    const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text;
    const result = query.apply(this, args);
    if (!timing || text === undefined || !(result instanceof Promise)) return result;
    const name = label(text);
    // Not awaited by the request: off its path.
    if (name === TOKEN_TOUCH) return result;
    const started = performance.now();
    return result.finally(() => {
      const entry = timing.statements.get(name) ?? { count: 0, ms: 0 };
      entry.count++;
      entry.ms += performance.now() - started;
      timing.statements.set(name, entry);
    });
  };
  return () => {
    client.query = query;
  };
}

/** A statement's short name: its first words, enough to tell Baton's statements apart. */
function label(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const known: [RegExp, string][] = [
    [/^WITH g AS/, 'token lookup + rate count (own transaction)'],
    [/^begin$/i, 'begin'],
    [/^commit$/i, 'commit'],
    [/pg_try_advisory_xact_lock/, 'idempotency key claim'],
    [/^SELECT \* FROM leases WHERE id/, 'lease read'],
    [/^SELECT l\.\* FROM unnest/, 'leases read'],
    [/CROSS JOIN LATERAL.*FOR UPDATE OF tasks$/, 'leases read + tasks lock'],
    [/FOR UPDATE OF tasks$/, 'lease read + task lock'],
    [/^SELECT "tasks"\."id".*ORDER BY id FOR UPDATE$/, 'tasks lock'],
    [/^SELECT "tasks"\."id".* FOR UPDATE$/, 'task lock'],
    [/^WITH ended AS \(UPDATE leases SET state = \$1/, 'hand-in update (task + lease)'],
    [/^WITH ended AS \( UPDATE leases SET state = 'ended'/, 'hand-in update (all tasks + leases)'],
    [/^WITH queued AS/, 'pick next (SKIP LOCKED)'],
    [/^WITH granted AS/, 'grant lease(s)'],
    [/from "comments"/, 'discussion read (comments)'],
    [/^WITH wake AS/, 'events append + stored response'],
    [/^update "tokens" set "last_used_at"/, TOKEN_TOUCH],
  ];
  return known.find(([pattern]) => pattern.test(flat))?.[1] ?? flat.slice(0, 60);
}

function report(timing: Timing, batch: number): string {
  const per = (ms: number) => (ms / timing.requests).toFixed(2);
  const rows = [...timing.statements.entries()].map(([name, { count, ms }]) => ({ name, count: count / timing.requests, ms }));
  const inDatabase = rows.reduce((sum, r) => sum + r.ms, 0);
  const what = batch === 1 ? 'leases_cycle (hand in 1, claim 1)' : `leases_cycle_many (hand in ${batch}, claim ${batch})`;
  const lines = [
    `${what}: ${timing.requests} calls, one at a time, ${per(timing.requestMs)} ms a call (${(timing.requestMs / timing.requests / batch).toFixed(2)} ms a job)`,
    '',
    '| where | statements a call | ms a call |',
    '|---|---:|---:|',
    ...rows.sort((a, b) => b.ms - a.ms).map((r) => `| ${r.name} | ${r.count.toFixed(1)} | ${per(r.ms)} |`),
    `| **round trips to PostgreSQL, all** | ${rows.reduce((sum, r) => sum + r.count, 0).toFixed(1)} | ${per(inDatabase)} |`,
    `| **Baton in process** (the rest: routing, validation, auth, idempotency, shaping, JSON) | | ${per(timing.requestMs - inDatabase)} |`,
  ];
  return lines.join('\n');
}

await main();
