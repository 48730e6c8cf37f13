/**
 * `node bench/claims.ts [--scenario=single|complete|batch16] [--concurrency=1,8,32] [--profile]`
 *
 * Claims per second on PostgreSQL: Baton (`node src/main.ts`) beside a same-SQL route (Fastify + pg
 * sending all of Baton's statements, `bench/claims-server.ts --same-sql`), a minimal Fastify + pg route
 * (the claim work alone, bench/claims-server.ts) and the same transactions as raw SQL on a pg pool in
 * this process (bench/claims-statements.ts), at concurrency 1, 8 and 32. single: claim (todo → in_progress, a new
 * lease) then release of that lease (in_progress → todo); complete: claim then the holder's move to
 * in_review (the lease ends; the task leaves the queue); batch16 claims up to 16 tasks in one
 * request, then releases them all in one (leases_release_many). Every run gets a fresh database holding SEED_TASKS todo
 * tasks (BENCH_CLAIMS_TASKS, default 20000). BENCH_SECONDS sets the measured seconds per run (default 8); BENCH_DATABASE_URL the
 * PostgreSQL server. Prints the table and writes it to bench/CLAIMS.md (full runs only). `--profile`
 * runs the two servers under `node --cpu-prof` and prints where their CPU time goes per task. Child
 * processes and databases are removed on exit, on error and on Ctrl-C.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateToken } from '../src/tokens.ts';
import { type RawClaim, rawClaim, rawComplete, rawRelease, rawReleaseMany, seedTodoTasks } from './claims-statements.ts';
import { cpuNote, cpuPerUnit, watchCpu } from './cpu.ts';
import { stockPool } from './pg-pools.ts';
import { backendPids, DB_POOL_SIZE, freshDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { Cleanup, startServer, wasInterrupted } from './processes.ts';
import { summariseProfile } from './profile.ts';
import { checkClaimsSql } from './sql-check.ts';
import { describeMachine, type Machine } from './report.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const MINIMAL_MAIN = fileURLToPath(new URL('claims-server.ts', import.meta.url));
const RESULTS = new URL('CLAIMS.md', import.meta.url);
/** Todo tasks in each fresh database: BENCH_CLAIMS_TASKS, default 20,000 (complete cycles use them up). */
const SEED_TASKS = Number(process.env.BENCH_CLAIMS_TASKS ?? 20000);
/** Cycles before each measured run (at most twice the measured seconds), so V8 has optimised the server; see bench/run.ts. */
const WARMUP_SECONDS = 8;

/** How many tasks one claim asks for, and how each claimed task is finished. */
const SCENARIOS = {
  single: { limit: 1, finish: 'release' },
  complete: { limit: 1, finish: 'complete' },
  batch16: { limit: 16, finish: 'release_many' },
} as const;
type Scenario = keyof typeof SCENARIOS;
const CONCURRENCIES = [1, 8, 32];
const TARGETS = ['baton', 'same', 'minimal', 'raw'] as const;
type Target = (typeof TARGETS)[number];


/** How one target claims, releases and completes. */
interface Driver {
  claim(limit: number): Promise<RawClaim[]>;
  release(claim: RawClaim): Promise<void>;
  releaseMany(claims: readonly RawClaim[]): Promise<void>;
  complete(claim: RawClaim): Promise<void>;
}

interface Result {
  cyclesPerS: number;
  tasksPerS: number;
  p50: number;
  p99: number;
  cycles: number;
  /** CPU ms per claimed task: server process (or this process, for raw) plus its database backends. */
  cpuMs: number | undefined;
}

interface Row {
  scenario: Scenario;
  concurrency: number;
  results: Record<Target, Result>;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { values } = parseArgs({ args, options: { scenario: { type: 'string' }, concurrency: { type: 'string' }, profile: { type: 'boolean', default: false } } });
  const seconds = Number(process.env.BENCH_SECONDS ?? 8);
  if (!(seconds > 0)) throw new Error(`BENCH_SECONDS must be a positive number (got ${process.env.BENCH_SECONDS})`);
  if (!(Number.isInteger(SEED_TASKS) && SEED_TASKS >= 512)) throw new Error(`BENCH_CLAIMS_TASKS must be an integer of at least 512 (got ${process.env.BENCH_CLAIMS_TASKS})`);
  const scenarios = (Object.keys(SCENARIOS) as Scenario[]).filter((s) => values.scenario === undefined || s === values.scenario);
  if (scenarios.length === 0) throw new Error(`--scenario=${values.scenario} is not one of ${Object.keys(SCENARIOS).join(', ')}`);
  const concurrencies = values.concurrency === undefined ? CONCURRENCIES : values.concurrency.split(',').map(Number);
  if (!concurrencies.every((c) => Number.isInteger(c) && c > 0)) throw new Error(`--concurrency must list positive integers, e.g. 1,8,32`);
  const machine = await describeMachine(await postgresVersion());
  if (Number(machine.load) > machine.cores / 2) log(`warning: load average ${machine.load} on ${machine.cores} cores — the numbers will be low and noisy`);
  const token = generateToken();
  const runId = randomBytes(4).toString('hex');
  const date = new Date();
  const profileDir = values.profile ? await mkdtemp(join(tmpdir(), 'baton-claims-profiles-')) : undefined;

  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  const rows: Row[] = [];
  let sqlCheck: string;
  try {
    sqlCheck = await checkSql(runId, token, cleanup);
    for (const scenario of scenarios) {
      for (const concurrency of concurrencies) {
        const results = {} as Record<Target, Result>;
        for (const target of TARGETS) {
          results[target] = await measure({ target, scenario, concurrency, seconds, token, profileDir, name: `baton_bench_claims_${runId}_${target}_${scenario}_${concurrency}` }, cleanup);
        }
        const ratio = (other: Target) => (results.baton.tasksPerS / results[other].tasksPerS).toFixed(2);
        log(`${scenario} ×${concurrency}: Baton/same-SQL ${ratio('same')}×, Baton/minimal ${ratio('minimal')}×, Baton/raw ${ratio('raw')}×`);
        rows.push({ scenario, concurrency, results });
      }
    }
  } finally {
    await cleanup.run();
  }
  const table = claimsTable(rows);
  process.stdout.write(`\n${table}\n\n`);
  if (profileDir) {
    process.stdout.write(`Profiles kept in ${profileDir}; bench/CLAIMS.md left unchanged (profiling perturbs the numbers).\n`);
  } else if (values.scenario === undefined && values.concurrency === undefined) {
    await writeFile(RESULTS, report(table, machine, commandLine(args), seconds, date, sqlCheck));
    process.stdout.write(`Written to ${fileURLToPath(RESULTS)}\n`);
  } else {
    process.stdout.write('Partial run: bench/CLAIMS.md left unchanged.\n');
  }
}

/** Compares the raw SQL's claim statements with Baton's on a scratch database; returns the verdict to record. */
async function checkSql(runId: string, token: string, cleanup: Cleanup): Promise<string> {
  const database = await freshDatabase('postgres', `baton_bench_claims_${runId}_sql_check`, token, cleanup);
  const check = await checkClaimsSql(database.url, token);
  log(check.matches ? `SQL check: ${check.report}` : `\nWARNING: ${check.report}\n`);
  return check.report;
}

interface RunPlan {
  target: Target;
  scenario: Scenario;
  concurrency: number;
  seconds: number;
  token: string;
  name: string;
  /** Where the servers' CPU profiles go, when profiling. */
  profileDir: string | undefined;
}

/** One run on its own fresh database: start the target, seed, warm up, measure, stop, drop. */
async function measure(plan: RunPlan, cleanup: Cleanup): Promise<Result> {
  const label = `${plan.scenario} ×${plan.concurrency} ${plan.target}`;
  const run = new Cleanup();
  cleanup.add(() => run.run());
  let output = () => '';
  let profiled = 0;
  try {
    const database = await freshDatabase('postgres', plan.name, plan.token, run);
    await seedTodoTasks(database.url, SEED_TASKS);
    let driver: Driver;
    let pid: number;
    if (plan.target === 'raw') {
      const pool = stockPool(database.url, DB_POOL_SIZE);
      run.add(() => pool.end());
      driver = {
        claim: (limit) => rawClaim(pool, limit),
        release: (c) => rawRelease(pool, c.lease_id),
        releaseMany: (claims) => rawReleaseMany(pool, claims.map((c) => c.lease_id)),
        complete: (c) => rawComplete(pool, c),
      };
      pid = process.pid;
    } else {
      const [args, env] =
        plan.target === 'baton'
          ? [[BATON_MAIN], { PORT: '0', HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_BOOTSTRAP_TOKEN: plan.token, BATON_DB_POOL_SIZE: String(DB_POOL_SIZE), BATON_RATE_LIMIT: RATE_LIMIT, DATABASE_URL: database.url }]
          : [[MINIMAL_MAIN, `--database-url=${database.url}`, `--pool-size=${DB_POOL_SIZE}`, ...(plan.target === 'same' ? ['--same-sql'] : [])], {}];
      const profile = plan.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${join(plan.profileDir, plan.name)}`] : [];
      const server = await startServer([...profile, ...args], env, run);
      output = () => server.output();
      driver = plan.target === 'baton' ? batonDriver(server.url, plan.token, plan.name) : minimalDriver(server.url, plan.target === 'same' ? { token: plan.token, tag: plan.name } : undefined);
      pid = server.pid;
    }
    const scenario = SCENARIOS[plan.scenario];
    await drive(driver, scenario, plan.concurrency, Math.min(WARMUP_SECONDS, 2 * plan.seconds));
    const cpu = await watchCpu(pid, () => backendPids(database));
    const load = await drive(driver, scenario, plan.concurrency, plan.seconds);
    const used = cpuPerUnit(await cpu.stop(), load.tasks);
    if (load.cycles === 0) throw new Error(`no cycle completed in ${plan.seconds} s`);
    const elapsed = load.elapsedMs / 1000;
    const sorted = load.latencies.sort((a, b) => a - b);
    const result: Result = {
      cyclesPerS: load.cycles / elapsed,
      tasksPerS: load.tasks / elapsed,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      cycles: load.cycles,
      cpuMs: used?.totalMs,
    };
    const note = cpuNote(used, 'task', plan.target === 'raw' ? 'this process' : 'server');
    profiled = load.tasks;
    log(`${label}: ${result.cyclesPerS.toFixed(0)} cycles/s, ${result.tasksPerS.toFixed(0)} tasks/s, p50 ${result.p50.toFixed(1)} ms, p99 ${result.p99.toFixed(1)} ms${note} (${load.cycles} cycles${load.empty ? `, ${load.empty} empty claims` : ''})`);
    return result;
  } catch (error) {
    const tail = output();
    throw new Error(`${label}: ${(error as Error).message}${tail ? `\n--- last server output ---\n${tail}` : ''}`, { cause: error });
  } finally {
    await run.run();
    // The server has stopped and written its profile; "ms/req" below is per claimed task.
    if (plan.profileDir && plan.target !== 'raw' && profiled > 0) log(await summariseProfile(join(plan.profileDir, plan.name), plan.seconds, profiled));
  }
}

interface Load {
  cycles: number;
  tasks: number;
  empty: number;
  latencies: number[];
  elapsedMs: number;
}

/**
 * `concurrency` loops for `seconds`: claim up to the scenario's limit, then release or complete
 * each claimed task in turn. A cycle counts when it ends before time is up; one still running then
 * is finished but not counted. Completed tasks leave the queue: an empty claim then means the seed
 * was too small, and fails the run rather than measure an empty queue.
 */
async function drive(driver: Driver, scenario: (typeof SCENARIOS)[Scenario], concurrency: number, seconds: number): Promise<Load> {
  const load: Load = { cycles: 0, tasks: 0, empty: 0, latencies: [], elapsedMs: seconds * 1000 };
  const start = performance.now();
  const end = start + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const claims = await driver.claim(scenario.limit);
      if (scenario.finish === 'release_many') {
        if (claims.length > 0) await driver.releaseMany(claims);
      } else {
        for (const claim of claims) await (scenario.finish === 'release' ? driver.release(claim) : driver.complete(claim));
      }
      const t1 = performance.now();
      if (claims.length === 0 && scenario.finish === 'complete') throw new Error(`the queue ran dry: raise BENCH_CLAIMS_TASKS above ${SEED_TASKS}`);
      if (t1 > end) break;
      if (claims.length === 0) {
        load.empty++;
        continue;
      }
      load.cycles++;
      load.tasks += claims.length;
      load.latencies.push(t1 - t0);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return load;
}

/** Sends a JSON request and returns the body; anything but 200 fails the run. */
async function send(method: 'POST' | 'PATCH', url: string, body: object | undefined, headers: Record<string, string> = {}): Promise<string> {
  const response = await fetch(url, {
    method,
    ...(body ? { headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) } : { headers }),
  });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${method} ${url} answered ${response.status}: ${text.slice(0, 500)}`);
  return text;
}

function batonDriver(url: string, token: string, tag: string): Driver {
  let keys = 0;
  const call = (method: 'POST' | 'PATCH', path: string, body: object) =>
    send(method, `${url}/api/v1${path}`, body, { authorization: `Bearer ${token}`, 'idempotency-key': `${tag}-${keys++}` });
  return {
    claim: async (limit) => {
      const body = JSON.parse(await call('POST', '/tasks/claim', limit === 1 ? {} : { limit })) as { claims: { lease: { id: string; task_id: string; epoch: number } }[] };
      return body.claims.map(({ lease }) => ({ task_id: lease.task_id, lease_id: lease.id, epoch: lease.epoch }));
    },
    release: async (claim) => {
      await call('POST', `/leases/${claim.lease_id}/release`, {});
    },
    releaseMany: async (claims) => {
      await call('POST', '/leases/release', { ids: claims.map((c) => c.lease_id) });
    },
    complete: async (claim) => {
      await call('PATCH', `/tasks/${claim.task_id}`, { status: 'in_review', lease_epoch: claim.epoch });
    },
  };
}

/** The minimal route's requests; on the same-SQL route each carries the token and a fresh Idempotency-Key, as Baton's do. */
function minimalDriver(url: string, sameSql?: { token: string; tag: string }): Driver {
  let keys = 0;
  const headers = (): Record<string, string> => (sameSql ? { authorization: `Bearer ${sameSql.token}`, 'idempotency-key': `${sameSql.tag}-${keys++}` } : {});
  return {
    claim: async (limit) => (JSON.parse(await send('POST', `${url}/claim`, { limit }, headers())) as { claims: RawClaim[] }).claims,
    release: async (claim) => {
      await send('POST', `${url}/release/${claim.lease_id}`, undefined, headers());
    },
    releaseMany: async (claims) => {
      await send('POST', `${url}/release`, { ids: claims.map((c) => c.lease_id) }, headers());
    },
    complete: async (claim) => {
      await send('POST', `${url}/complete`, claim, headers());
    },
  };
}

function percentile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

function claimsTable(rows: readonly Row[]): string {
  const lines = [
    '| scenario | concurrency | Baton /s | p50 / p99 ms | CPU ms/task | same-SQL route /s | p50 / p99 ms | CPU ms/task | minimal route /s | p50 / p99 ms | CPU ms/task | raw SQL /s | p50 / p99 ms | CPU ms/task | Baton ÷ same-SQL | Baton ÷ minimal | Baton ÷ raw |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  const cells = (r: Result, scenario: Scenario) => {
    const rate = SCENARIOS[scenario].limit === 1 ? `${r.cyclesPerS.toFixed(0)} cycles` : `${r.tasksPerS.toFixed(0)} tasks`;
    return `${rate} | ${r.p50.toFixed(1)} / ${r.p99.toFixed(1)} | ${r.cpuMs?.toFixed(2) ?? '–'}`;
  };
  for (const { scenario, concurrency, results } of rows) {
    const { baton, same, minimal, raw } = results;
    const ratio = (other: Result) => `${(baton.tasksPerS / other.tasksPerS).toFixed(2)}×`;
    lines.push(
      `| ${scenario} | ${concurrency} | ${cells(baton, scenario)} | ${cells(same, scenario)} | ${cells(minimal, scenario)} | ${cells(raw, scenario)} | ${ratio(same)} | ${ratio(minimal)} | ${ratio(raw)} |`,
    );
  }
  return lines.join('\n');
}

function report(table: string, m: Machine, command: string, seconds: number, date: Date, sqlCheck: string): string {
  return `# Claims benchmark

${date.toISOString()} — \`${command}\` — Baton ${m.revision}

${table}

SQL check: ${sqlCheck}.

Machine: ${m.cores} cores (\`nproc\`; ${m.cpu}), ${m.memoryGiB} GiB memory, load average ${m.load} before the run;
Node ${m.node}; PostgreSQL ${m.postgres}.

For context, the issue's reference numbers on these machines: pg-boss's fetch + complete did about
1,400 jobs/s, graphile-worker's batched mode about 11,700 jobs/s (each a different unit of work
from the cycle here; see below). \`npm run bench\` now measures both peers on the machine it runs
on, after this benchmark: [PEERS.md](PEERS.md).

## What one cycle is

- **single**: \`POST /api/v1/tasks/claim {}\` (claims the next todo task: todo → in_progress, a new
  lease, events task.claimed + task.status_changed), then \`POST /api/v1/leases/{lease_id}/release {}\`
  (lease released, in_progress → todo, events lease.released + task.status_changed). The released
  task goes back to the queue, so the queue never runs dry. Rate = completed cycles per second;
  p50/p99 = latency of the whole cycle (two requests).
- **complete**: the same claim, then the holder finishes the work: \`PATCH /api/v1/tasks/{task_id}
  {"status": "in_review", "lease_epoch": n}\` (lease ended, in_progress → in_review, events
  lease.released + task.status_changed). This is the claim + transition cycle, and the one to set
  beside a job queue's fetch + complete. The task leaves the queue, so each run is seeded with
  enough tasks for it (BENCH_CLAIMS_TASKS). Rate = completed cycles per second.
- **batch16**: \`POST /api/v1/tasks/claim {"limit": 16}\`, then \`POST /api/v1/leases/release
  {"ids": [the 16 leases]}\` (\`leases_release_many\`, since 2026-11-24: before, the 16 releases went
  one by one). Rate = tasks claimed (and released) per second; p50/p99 = latency of the whole cycle
  (two requests).
- Each worker is an async loop in the benchmark process with keep-alive \`fetch\`; \`concurrency\` =
  number of workers. Every Baton write carries a fresh Idempotency-Key. A cycle counts if it ends
  within the ${seconds} s measured window (after a ${Math.min(WARMUP_SECONDS, 2 * seconds)} s warm-up); any non-2xx answer fails the run.

## The four targets

- **Baton**: \`node src/main.ts\` in a child process with \`BATON_LOG_LEVEL=warn\`,
  \`BATON_DB_POOL_SIZE=${DB_POOL_SIZE}\`, \`BATON_RATE_LIMIT=${RATE_LIMIT}\`, defaults otherwise (lease sweeper on),
  the bootstrap admin's token.
- **same-SQL route** (\`bench/claims-server.ts --same-sql\`): the minimal route below, but each request
  also sends Baton's per-request statements: the token's grant lookup with its rate count (on a second
  pool whose sessions run \`synchronous_commit = off\`, as Baton's \`Database.counters\`), the
  idempotency-key claim first in the transaction, and the stored response, carrying the events, last.
  Requests carry the admin's token and a fresh Idempotency-Key. It sends exactly Baton's statements, so
  **Baton ÷ same-SQL** shows only what Baton does in process (validation, shaping, \`next_actions\`,
  errors, hooks), as \`bench/run.ts\`'s baseline does for create, get and patch.
- **minimal route** (\`bench/claims-server.ts\`): bare Fastify + pg pool (${DB_POOL_SIZE}) in a child process,
  \`POST /claim {limit}\`, \`POST /release/:lease_id\`, \`POST /release {ids}\` and \`POST /complete\`, running the raw transactions below. No auth,
  no idempotency keys, no validation, no response shaping. **Baton ÷ minimal** adds the cost of
  authentication, rate counting and idempotency to what Baton ÷ same-SQL shows.
- **raw SQL** (\`bench/claims-statements.ts\`): the minimal route's transactions called directly on a pg pool (${DB_POOL_SIZE})
  inside the benchmark process — no HTTP at all.
- All four send their statements as named prepared statements through pg's public
  \`{ name, text, values }\` (the raw SQL on stock pg, \`bench/pg-pools.ts\`): the same SQL, sent the same way,
  with \`begin\` and \`commit\` as statements of their own.
- Raw claim transaction: \`begin\`; pickClaimable's \`SELECT … ORDER BY priority DESC, id LIMIT n FOR
  UPDATE SKIP LOCKED\` (limit and priority floor as parameters: the
  statement's text is fixed by the code); one statement inserting the leases and updating the tasks
  (\`jsonb_to_recordset\`, the task id also as a scalar, or an array for a batch, so the planner uses the
  primary key); event append under its advisory lock;
  \`commit\`. Raw release: \`begin\`; lease lookup; task \`SELECT … FOR UPDATE\`; lease re-read; one
  statement ending the lease and updating the task; event append; \`commit\`. Raw batch release:
  \`begin\`; the leases' lookup; their tasks \`SELECT … ORDER BY id FOR UPDATE\`; the leases re-read; one
  statement ending every lease and requeueing every task; event append; \`commit\`. Raw complete: \`begin\`;
  task \`SELECT … FOR UPDATE\` (epoch check); the same lease-ending task update; event append;
  \`commit\`. These are the statements Baton's claim-next, release, batch release and task update send for the work
  itself (src/store/leases.ts, tasks.ts, events.ts). Baton also sends, per request, its token lookup +
  rate count (its own transaction) and, per write, the idempotency-key claim; it stores the response
  in the event append's statement.
- SQL check (\`bench/sql-check.ts\`): before the runs, one claim, complete, release and batch release go through Baton
  in process and through the raw SQL, recording the statements each sends; apart from Baton's
  overhead above, the two lists must match (identifier quotes aside), since the raw SQL is a copy;
  the same-SQL route's lists must match Baton's whole.
  The verdict is printed and recorded above the method.
- Each (scenario, concurrency, target) run has its own fresh database (\`baton_bench_claims_*\`, dropped
  afterwards), migrated by Baton's start-up, seeded with ${SEED_TASKS} todo tasks by SQL.
- CPU ms/task: user + system CPU over the measured window of the server process (for raw SQL: the
  benchmark process itself, workers included) plus the PostgreSQL backends of its database, per task
  claimed. The backends are listed and read every second (bench/cpu.ts): one a pool opens in the
  window counts from zero, one it closes up to its last reading, and the log line says when one did. The HTTP client's CPU (this process) is not counted for Baton and the two routes, but it
  shares the ${m.cores} cores with them.
`;
}

function commandLine(args: readonly string[]): string {
  const env = ['BENCH_SECONDS', 'BENCH_CLAIMS_TASKS', 'BENCH_DESCRIPTION_BYTES']
    .filter((name) => process.env[name])
    .map((name) => `${name}=${process.env[name]} `)
    .join('');
  const event = process.env.npm_lifecycle_event;
  const via = event === 'bench' || event === 'bench:claims' ? `npm run ${event}${args.length > 0 ? ' --' : ''}` : 'node bench/claims.ts';
  return [env + via, ...args].join(' ');
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

if (import.meta.main) {
  await main().catch((error: unknown) => {
    if (wasInterrupted()) return;
    process.stderr.write(`\nclaims bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
  // Every server and database is gone by now, but a handle left open (not yet found) kept the
  // process alive after the table was written; `npm run bench` would never finish.
  process.exit();
}
