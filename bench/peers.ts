/**
 * `node bench/peers.ts [--concurrency=8] [--peer=baton,pg-boss,graphile-worker]` (one or more)
 *
 * The peer queues the claims issue measures Baton against, run here, on the same machine and
 * PostgreSQL, so bench/CLAIMS.md compares with numbers from this machine rather than from another:
 *
 * - pg-boss: `fetch` + `complete` loops (batch 1, and batch 16 completed in one call), each loop
 *   waiting for its own answers, at `--concurrency` loops (default 8), on a pool of DB_POOL_SIZE.
 * - graphile-worker: a runner with the "batched mode" of its performance page (24 concurrent jobs,
 *   a local queue of 500, completions batched), and one with its defaults at the same concurrency.
 *
 * - Baton, matched mode for mode with pg-boss: its one-call work cycle (`leases_cycle`: hand the task
 *   in and claim the next) at `--concurrency` agents, and its batch form (`leases_cycle_many` of 16)
 *   at as many, over HTTP to `node src/main.ts` in a child process.
 *
 * Both peers are libraries called in this process: no HTTP, no events, no idempotency, no auth. Each
 * run gets a fresh database that the peer migrates itself, filled with more jobs than it finishes
 * (`JOBS`); jobs/s counts the jobs completed in the measured seconds, after a warm-up. CPU ms per job is this
 * process plus the database's backends. Writes bench/PEERS.md on a full run (no option given).
 */
import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import { Logger, makeWorkerUtils, run } from 'graphile-worker';
import { generateToken } from '../src/tokens.ts';
import { descriptionBytes, seedTodoTasks } from './claims-statements.ts';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { cpuPerUnit, type CpuPerUnit, exitedCount, exitedNote, watchCpu } from './cpu.ts';
import { backendPids, DB_POOL_SIZE, type DatabaseLocation, emptyDatabase, freshDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { Cleanup, startServer } from './processes.ts';
import { describeMachine, type Machine } from './report.ts';

const RESULTS = new URL('PEERS.md', import.meta.url);
const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
/** At most; a short run (BENCH_SECONDS under 4) warms up for twice its measured seconds, as bench/claims.ts. */
const WARMUP_SECONDS = 8;
/** Jobs queued before each run: more than each peer finishes in the warm-up and the measured seconds (a run that drains its queue fails). */
const JOBS = { baton: 150_000, 'pg-boss': 300_000, 'graphile-worker': 1_000_000 } as const;
type Peer = keyof typeof JOBS;
/** The batch of the batch modes (pg-boss fetch 16 + complete 16, Baton leases_cycle_many of 16). */
const BATCH = 16;
const QUEUE = 'bench';

interface Result {
  name: string;
  mode: string;
  /** Which matched comparison (Baton against pg-boss) the run belongs to. */
  matches: string | undefined;
  jobsPerS: number;
  jobs: number;
  cpu: CpuPerUnit | undefined;
}

/** Counts completed jobs; `measure` reads the count and the CPU over the measured window. */
interface Running {
  /** The process doing the queue's work besides the database: this one for the library peers, Baton's server for Baton. */
  pid: number;
  completed(): number;
  /** The queue ran dry: the measured seconds did not all do work. */
  drained(): boolean;
  stop(): Promise<void>;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { concurrency: { type: 'string' }, peer: { type: 'string' } } });
  const concurrency = values.concurrency === undefined ? 8 : Number(values.concurrency);
  if (!(Number.isInteger(concurrency) && concurrency > 0)) throw new Error('--concurrency must be a positive integer');
  const peers = values.peer?.split(',').map((name) => name.trim());
  const unknown = peers?.filter((name) => !Object.hasOwn(JOBS, name)) ?? [];
  if (unknown.length > 0) throw new Error(`--peer=${unknown.join(',')}: each must be one of ${Object.keys(JOBS).join(', ')}`);
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  if (!(seconds > 0)) throw new Error(`BENCH_SECONDS must be a positive number (got ${process.env.BENCH_SECONDS})`);
  const machine = await describeMachine(await postgresVersion());
  const runId = randomBytes(4).toString('hex');
  const date = new Date();
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  const results: Result[] = [];
  const token = generateToken();
  const plans: { name: Peer; mode: string; matches?: string; start: (database: DatabaseLocation & { engine: 'postgres' }, cleanup: Cleanup) => Promise<Running> }[] = [
    { name: 'baton', mode: `leases_cycle (hand in + claim next, one call), ${concurrency} agents`, matches: 'single', start: (db, c) => baton(db, token, concurrency, 1, c) },
    { name: 'pg-boss', mode: `fetch 1 + complete, ${concurrency} loops`, matches: 'single', start: (db) => pgBoss(db.url, concurrency, 1) },
    { name: 'baton', mode: `leases_cycle_many of ${BATCH} (hand in ${BATCH} + claim ${BATCH}, one call), ${concurrency} agents`, matches: 'batch', start: (db, c) => baton(db, token, concurrency, BATCH, c) },
    { name: 'pg-boss', mode: `fetch ${BATCH} + complete ${BATCH}, ${concurrency} loops`, matches: 'batch', start: (db) => pgBoss(db.url, concurrency, BATCH) },
    { name: 'graphile-worker', mode: 'batched: 24 jobs at once, local queue 500, completions batched', start: (db) => graphile(db.url, 24, true) },
    { name: 'graphile-worker', mode: `defaults, ${concurrency} jobs at once`, start: (db) => graphile(db.url, concurrency, false) },
  ];
  const warmup = Math.min(WARMUP_SECONDS, 2 * seconds);
  try {
    for (const [index, plan] of plans.entries()) {
      if (peers !== undefined && !peers.includes(plan.name)) continue;
      const name = `baton_bench_peers_${runId}_${index}`;
      const database = plan.name === 'baton' ? await freshDatabase('postgres', name, token, cleanup) : await emptyDatabase(name, cleanup);
      const run = new Cleanup();
      const running = await plan.start(database, run).catch(async (error: unknown) => {
        await run.run();
        throw error;
      });
      try {
        await sleep(warmup * 1000);
        const cpu = await watchCpu(running.pid, () => backendPids(database));
        const done = running.completed();
        const started = performance.now();
        await sleep(seconds * 1000);
        const jobs = running.completed() - done;
        if (running.drained()) throw new Error(`${plan.name} (${plan.mode}) ran out of queued jobs: raise JOBS in bench/peers.ts`);
        const elapsed = (performance.now() - started) / 1000;
        const used = await cpu.stop();
        if (jobs === 0) throw new Error(`${plan.name} (${plan.mode}) completed no job in ${seconds} s`);
        const result = { name: plan.name, mode: plan.mode, matches: plan.matches, jobsPerS: jobs / elapsed, jobs, cpu: cpuPerUnit(used, jobs) };
        const own = plan.name === 'baton' ? 'server' : 'this process';
        log(`${result.name}, ${result.mode}: ${Math.round(result.jobsPerS)} jobs/s${result.cpu ? `, ${result.cpu.totalMs.toFixed(2)} CPU ms per job (${own} ${result.cpu.ownMs.toFixed(2)}, database ${(result.cpu.totalMs - result.cpu.ownMs).toFixed(2)})${exitedNote(result.cpu)}` : ''}`);
        results.push(result);
      } finally {
        await running.stop();
        await run.run();
      }
    }
  } finally {
    await cleanup.run();
  }
  const table = `${peersTable(results)}\n\n${matchedTable(results)}`;
  process.stdout.write(`\n${table}\n\n`);
  if (values.concurrency === undefined && values.peer === undefined) {
    await writeFile(RESULTS, report(table, machine, seconds, warmup, date));
    process.stdout.write(`Written to ${fileURLToPath(RESULTS)}\n`);
  } else {
    process.stdout.write('Partial run: bench/PEERS.md left unchanged.\n');
  }
}

/** `loops` loops, each fetching up to `batch` jobs and completing them in one call, until stopped. */
async function pgBoss(url: string, loops: number, batch: number): Promise<Running> {
  const boss = new PgBoss({ connectionString: url, max: DB_POOL_SIZE, schedule: false, supervise: false });
  boss.on('error', (error: unknown) => log(`pg-boss error: ${String(error)}`));
  await boss.start();
  await boss.createQueue(QUEUE);
  const total = JOBS['pg-boss'];
  // The job carries as much text as a seeded Baton task's description (BENCH_DESCRIPTION_BYTES).
  const bytes = descriptionBytes();
  const description = randomBytes(Math.ceil(bytes / 2)).toString('hex').slice(0, bytes);
  for (let queued = 0; queued < total; queued += 10_000) {
    await boss.insert(QUEUE, Array.from({ length: Math.min(10_000, total - queued) }, (_, i) => ({ data: { n: queued + i, description } })));
  }
  let completed = 0;
  let stopping = false;
  let drained = false;
  const loop = async () => {
    while (!stopping) {
      const jobs = await boss.fetch(QUEUE, { batchSize: batch });
      if (jobs.length === 0) {
        drained = true;
        return;
      }
      await boss.complete(QUEUE, jobs.map((job) => job.id));
      completed += jobs.length;
    }
  };
  const running = Promise.all(Array.from({ length: loops }, loop));
  running.catch(() => undefined);
  return {
    pid: process.pid,
    completed: () => completed,
    drained: () => drained,
    stop: async () => {
      stopping = true;
      try {
        await running;
      } finally {
        await boss.stop({ graceful: false, close: true });
      }
    },
  };
}

/**
 * Baton (`node src/main.ts`, as bench/claims.ts starts it) over a database seeded with todo tasks:
 * `agents` loops, each claiming `batch` tasks once, then handing them all in and claiming as many
 * next in one call (`leases_cycle` for one, `leases_cycle_many` for a batch), with a fresh
 * Idempotency-Key each, until stopped. A job is a task handed in.
 */
async function baton(database: DatabaseLocation & { engine: 'postgres' }, token: string, agents: number, batch: number, cleanup: Cleanup): Promise<Running> {
  await seedTodoTasks(database.url, JOBS.baton);
  const env = { PORT: '0', HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: String(DB_POOL_SIZE), BATON_RATE_LIMIT: RATE_LIMIT, DATABASE_URL: database.url };
  const server = await startServer([BATON_MAIN], env, cleanup);
  let keys = 0;
  const post = async (path: string, body: object): Promise<{ claims: { lease: { id: string } }[]; ended?: unknown[] | object }> => {
    const response = await fetch(`${server.url}/api/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': `peers-${keys++}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (response.status !== 200) throw new Error(`POST ${path} answered ${response.status}: ${text.slice(0, 500)}`);
    return JSON.parse(text) as { claims: { lease: { id: string } }[] };
  };
  let completed = 0;
  let stopping = false;
  let drained = false;
  let failure: unknown;
  const loop = async () => {
    let held = (await post('/tasks/claim', { limit: batch })).claims.map((c) => c.lease.id);
    while (!stopping) {
      if (held.length === 0) {
        drained = true;
        return;
      }
      const answer =
        batch === 1 && held[0] !== undefined
          ? await post(`/leases/${held[0]}/cycle`, { summary: 'done' })
          : await post('/leases/cycle', { leases: held.map((id) => ({ id, summary: 'done' })) });
      completed += held.length;
      held = answer.claims.map((c) => c.lease.id);
    }
  };
  const running = Promise.all(Array.from({ length: agents }, loop)).catch((error: unknown) => {
    failure = error;
  });
  return {
    pid: server.pid,
    completed: () => {
      if (failure !== undefined) throw new Error(`Baton: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}\n${server.output()}`);
      return completed;
    },
    drained: () => drained,
    stop: async () => {
      stopping = true;
      await running;
      await server.stop();
    },
  };
}

/** A graphile-worker runner with a no-op task over its queued jobs. */
async function graphile(url: string, concurrency: number, batched: boolean): Promise<Running> {
  const logger = new Logger(() => () => undefined);
  const total = JOBS['graphile-worker'];
  // Our own pool, so that its connections end with the run (and a dropped database cannot crash us).
  const pool = new pg.Pool({ connectionString: url, max: Math.max(DB_POOL_SIZE, concurrency + 1) });
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const utils = await makeWorkerUtils({ pgPool: pool, logger });
  try {
    await utils.migrate();
    for (let queued = 0; queued < total; queued += 10_000) {
      await utils.addJobs(Array.from({ length: Math.min(10_000, total - queued) }, (_, i) => ({ identifier: QUEUE, payload: { n: queued + i } })));
    }
  } finally {
    await utils.release();
  }
  let completed = 0;
  const runner = await run({
    pgPool: pool,
    concurrency,
    noHandleSignals: true,
    pollInterval: 1000,
    logger,
    taskList: { [QUEUE]: async () => undefined },
    preset: batched ? { worker: { localQueue: { size: 500 }, completeJobBatchDelay: 0, failJobBatchDelay: 0 } } : {},
  });
  runner.events.on('job:success', () => {
    completed += 1;
  });
  return {
    pid: process.pid,
    completed: () => completed,
    drained: () => completed >= total,
    stop: async () => {
      await runner.stop();
      await runner.promise.catch(() => undefined);
      await pool.end();
    },
  };
}

function peersTable(results: readonly Result[]): string {
  const lines = [
    '| peer | mode | jobs /s | CPU ms/job | of which this process | jobs measured |',
    '|---|---|---:|---:|---:|---:|',
    ...results.map((r) => `| ${r.name} | ${r.mode} | ${Math.round(r.jobsPerS).toLocaleString('en-US')} | ${r.cpu?.totalMs.toFixed(2) ?? '–'} | ${r.cpu?.ownMs.toFixed(2) ?? '–'} | ${r.jobs.toLocaleString('en-US')} |`),
  ];
  const exited = results.flatMap((r) => (r.cpu?.exited ? [`${r.name}, ${r.mode}: ${exitedCount(r.cpu)}`] : []));
  if (exited.length > 0) lines.push('', `Database backends that exited in the measured window, counted up to their last reading (at most 1 s before): ${exited.join('; ')}.`);
  return lines.join('\n');
}

/** Baton beside pg-boss, mode for mode: the issue's target is Baton ≥ pg-boss in each. */
function matchedTable(results: readonly Result[]): string {
  const lines = ['| matched mode | Baton jobs /s | pg-boss jobs /s | Baton ÷ pg-boss | target (≥ 1) | Baton CPU ms/job (server + database) | pg-boss CPU ms/job |', '|---|---:|---:|---:|---|---:|---:|'];
  for (const matches of ['single', 'batch']) {
    const baton = results.find((r) => r.name === 'baton' && r.matches === matches);
    const boss = results.find((r) => r.name === 'pg-boss' && r.matches === matches);
    if (!baton || !boss) continue;
    const ratio = baton.jobsPerS / boss.jobsPerS;
    const cpu = (r: Result) => (r.cpu ? `${r.cpu.totalMs.toFixed(2)} (${r.cpu.ownMs.toFixed(2)} + ${(r.cpu.totalMs - r.cpu.ownMs).toFixed(2)})` : '–');
    lines.push(
      `| ${matches === 'single' ? 'one job per call' : `batch of ${BATCH}`} | ${Math.round(baton.jobsPerS).toLocaleString('en-US')} | ${Math.round(boss.jobsPerS).toLocaleString('en-US')} | ${ratio.toFixed(2)}× | ${ratio >= 1 ? 'met' : 'missed'} | ${cpu(baton)} | ${cpu(boss)} |`,
    );
  }
  return lines.length > 2 ? lines.join('\n') : '(no matched pair in this run)';
}

function report(table: string, machine: Machine, seconds: number, warmup: number, date: Date): string {
  return `# Peer queues on this machine

${date.toISOString()} — \`npm run bench:peers\` (also the last step of \`npm run bench\`)

${table}

Machine: ${machine.cores} cores (\`nproc\`; ${machine.cpu}), ${machine.memoryGiB} GiB memory, load average ${machine.load} before the run;
Node ${machine.node}; PostgreSQL ${machine.postgres}.

## Method

- The claims issue sets Baton beside two peer queues, with numbers measured "on these 2-core
  machines": pg-boss's fetch + complete about 1,400 jobs/s, graphile-worker's batched mode about
  11,700 jobs/s. This file measures both here, in the same \`npm run bench\` as
  [CLAIMS.md](CLAIMS.md), so the comparison is between numbers from one machine.
- Each run: a fresh PostgreSQL database, migrated by the peer itself, holding ${JOBS['pg-boss'].toLocaleString('en-US')} (pg-boss) or ${JOBS['graphile-worker'].toLocaleString('en-US')}
  (graphile-worker) queued jobs, more than it finishes in a run; ${warmup} s of warm-up, then ${seconds} s measured (\`BENCH_SECONDS\`). jobs/s is the jobs
  completed in the measured seconds. CPU ms/job is the user + system CPU of this process (where
  the peer runs; for Baton, its server process instead) and of the database's backends, over the measured seconds, per job.
  The backends are listed and read every second: a pool opens connections when it needs them and
  closes one idle for 10 s, so a backend first seen in the window counts from zero and one that
  exits counts up to its last reading (the table says when one did).
- Baton: \`node src/main.ts\` as bench/claims.ts starts it (pool ${DB_POOL_SIZE}, the bootstrap admin's token, lease
  sweeper on), on a database migrated by Baton and seeded with ${JOBS.baton.toLocaleString('en-US')} todo tasks, ${describedTasks(descriptionBytes())} (\`BENCH_DESCRIPTION_BYTES\`). Each agent claims
  once (\`POST /api/v1/tasks/claim\`), then loops: \`POST /api/v1/leases/{id}/cycle {"summary": "done"}\` (hand in,
  in_progress → in_review, and claim the next) or, batched, \`POST /api/v1/leases/cycle\` with its ${BATCH} leases (hand in
  ${BATCH}, claim ${BATCH}), each with a fresh Idempotency-Key, over keep-alive HTTP from this process. A job is a task
  handed in. The HTTP client's CPU (this process) is not counted, but shares the cores.
- pg-boss (${pgBossVersion}): \`fetch(queue, {batchSize})\` then \`complete(queue, ids)\` in a loop, several loops at
  once, on a pool of ${DB_POOL_SIZE} connections; \`schedule\` and \`supervise\` off.
- graphile-worker (${graphileVersion}): \`run()\` with a task that does nothing. "Batched" is the configuration of
  its performance page (24 concurrent jobs, \`localQueue.size\` 500, \`completeJobBatchDelay\` 0):
  it locks 500 jobs a fetch and completes many in one statement.
- What the peers do not do, and a Baton claim does: HTTP, a bearer token checked and counted per
  request, an idempotency key claimed and its response stored, two events per state change
  (appended in commit order), a lease row per claim, and an answer carrying the whole task with
  its next actions. A pg-boss job or a graphile-worker job is one row changed twice.
`;
}

/** How the seeded tasks' descriptions read in PEERS.md. */
function describedTasks(bytes: number): string {
  if (bytes === 0) return 'each with an empty description';
  return `each with a description of about ${bytes.toLocaleString('en-US')} bytes of made-up words (pg-boss's jobs carry as many bytes)`;
}

const pgBossVersion = await packageVersion('pg-boss');
const graphileVersion = await packageVersion('graphile-worker');

async function packageVersion(name: string): Promise<string> {
  const path = fileURLToPath(new URL(`../node_modules/${name}/package.json`, import.meta.url));
  return (JSON.parse(await readFile(path, 'utf8')) as { version: string }).version;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

await main();
