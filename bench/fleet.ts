/**
 * `npm run bench:fleet -- [--agents=1000] [--minutes=10] [--warmup-s=120] [--humans=100] [--processes=1]`
 *
 * The fleet one Baton instance carries (issue 44 §1). Baton (`node src/main.ts`) runs in a child
 * process on a fresh PostgreSQL database (BENCH_DATABASE_URL's server), seeded through SQL with
 * enough todo tasks for the whole run (as bench/claims.ts seeds). The simulated agents run in
 * `--processes` other child processes (bench/fleet-agents.ts), over HTTP keep-alive: each holds a
 * lease (TTL 180 s), heartbeats every 60 s (one in ten with a note), hands in and claims the next
 * task every 5 minutes in one call (`leases_cycle`), 1 % of attempts failing; the agents' first
 * claims are spread over the first minute of the warm-up (at most the warm-up) and their cycles
 * over 5 minutes, so the rates are steady (N/60 heartbeats and N/300 cycles a second). `--humans`
 * unfiltered event streams stay open in the agents' first process. Webhook subscribers are not
 * simulated yet.
 *
 * Reported over the measured minutes after the warm-up: p50/p99 per operation (calls started in
 * the window), errors, leases that lapsed (every `lease.expired` event: no simulated agent ever
 * stops heartbeating, so each one is wrong unless its agent was late, which is reported beside),
 * CPU per agent-hour of the server process and of the database's backends (utime + stime from
 * /proc/<pid>/stat, backends found in pg_stat_activity every second, bench/cpu.ts), the server's
 * RSS at the end and its peak (VmRSS, VmHWM), and pg_database_size growth over the window scaled to
 * one agent-day. All agents share the bootstrap admin token. Prints a Markdown report.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateToken } from '../src/tokens.ts';
import { seedTodoTasks } from './claims-statements.ts';
import { watchCpu } from './cpu.ts';
import { backendPids, DB_POOL_SIZE, freshDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import type { FleetPlan, FleetReport, Operation } from './fleet-agents.ts';
import { Cleanup, startServer } from './processes.ts';
import { describeMachine } from './report.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const AGENTS_MAIN = fileURLToPath(new URL('fleet-agents.ts', import.meta.url));
const HEARTBEAT_S = 60;
const CYCLE_S = 300;
const TTL_S = 180;
/** The agents' first claims are spread over this much of the warm-up at most. */
const RAMP_S = 60;
const OPERATIONS: Operation[] = ['heartbeat', 'cycle', 'claim'];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { values } = parseArgs({
    args,
    options: { agents: { type: 'string', default: '1000' }, minutes: { type: 'string', default: '10' }, 'warmup-s': { type: 'string', default: '120' }, humans: { type: 'string', default: '100' }, processes: { type: 'string', default: '1' } },
  });
  const agents = Number(values.agents);
  const minutes = Number(values.minutes);
  const warmupS = Number(values['warmup-s']);
  const humans = Number(values.humans);
  const processes = Number(values.processes);
  if (!(Number.isInteger(agents) && agents > 0)) throw new Error(`--agents must be a positive integer (got ${values.agents})`);
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number (got ${values.minutes})`);
  if (!(warmupS >= 0)) throw new Error(`--warmup-s must be zero or more (got ${values['warmup-s']})`);
  if (!(Number.isInteger(humans) && humans >= 0)) throw new Error(`--humans must be an integer of zero or more (got ${values.humans})`);
  if (!(Number.isInteger(processes) && processes > 0 && processes <= agents)) throw new Error(`--processes must be an integer from 1 to --agents (got ${values.processes})`);

  const machine = await describeMachine(await postgresVersion());
  if (Number(machine.load) > machine.cores / 2) log(`warning: load average ${machine.load} on ${machine.cores} cores — the numbers will be high and noisy`);
  const date = new Date();
  const token = generateToken();
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    const database = await freshDatabase('postgres', `baton_bench_fleet_${randomBytes(4).toString('hex')}`, token, cleanup);
    // Every agent's first task, and one per cycle of the run (ramp, warm-up and window), with a fifth to spare.
    const runS = warmupS + minutes * 60;
    const tasks = Math.ceil((agents + (agents * runS) / CYCLE_S) * 1.2) + 100;
    const seeding = performance.now();
    await seedTodoTasks(database.url, tasks);
    log(`seeded ${tasks} todo tasks in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);

    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      BATON_LOG_LEVEL: 'warn',
      BATON_BOOTSTRAP_TOKEN: token,
      BATON_DB_POOL_SIZE: String(DB_POOL_SIZE),
      BATON_RATE_LIMIT: RATE_LIMIT,
      DATABASE_URL: database.url,
    };
    const server = await startServer([BATON_MAIN], env, cleanup);

    const startAt = Date.now() + 2000;
    const measureFrom = startAt + warmupS * 1000;
    const measureTo = measureFrom + minutes * 60 * 1000;
    const base = { url: server.url, token, total: agents, startAt, rampMs: Math.min(RAMP_S, warmupS) * 1000, measureFrom, measureTo, heartbeatMs: HEARTBEAT_S * 1000, cycleMs: CYCLE_S * 1000, ttlS: TTL_S };
    const share = Math.ceil(agents / processes);
    const reports = Array.from({ length: processes }, (_, i) => runAgents({ ...base, first: i * share, count: Math.max(0, Math.min(share, agents - i * share)), humans: i === 0 ? humans : 0 }, cleanup));
    log(`${agents} agents in ${processes} process(es), ${humans} humans; warm-up ${warmupS} s, then ${minutes} measured minutes (ends ${new Date(measureTo).toISOString()})`);

    await sleepUntil(measureFrom);
    const sizeBefore = await databaseSize(database.url);
    const cpu = await watchCpu(server.pid, () => backendPids(database));
    await sleepUntil(measureTo);
    const used = await cpu.stop();
    const sizeAfter = await databaseSize(database.url);
    const memory = await serverMemory(server.pid);
    const fleet = merge(await Promise.all(reports));
    const lapsed = await lapsedLeases(database.url, fleet.abandoned);
    await server.stop();

    const agentHours = (agents * minutes) / 60;
    const figures: Figures = {
      agents,
      minutes,
      warmupS,
      humans,
      processes,
      fleet,
      lapsed,
      serverCpuSPerAgentHour: used ? used.ownSeconds / agentHours : undefined,
      databaseCpuSPerAgentHour: used ? (used.seconds - used.ownSeconds) / agentHours : undefined,
      memory,
      growthBytesPerAgentDay: ((sizeAfter - sizeBefore) / agentHours) * 24,
      sizeBefore,
      sizeAfter,
    };
    const command = `npm run bench:fleet -- ${args.join(' ')}`.trim();
    process.stdout.write(`\n${report(figures, command, date, machine)}\n`);
  } finally {
    await cleanup.run();
  }
}

/** Forks one agents process and resolves with its report; the process is killed on cleanup. */
function runAgents(plan: FleetPlan, cleanup: Cleanup): Promise<FleetReport> {
  const child = fork(AGENTS_MAIN, [], { execPath: process.execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.send(plan);
  return new Promise((resolve, reject) => {
    child.once('message', (message: { report?: FleetReport; error?: string }) => (message.report ? resolve(message.report) : reject(new Error(`agents process: ${message.error}`))));
    child.once('exit', (code) => reject(new Error(`agents process exited with code ${code} before reporting`)));
  });
}

function merge(reports: FleetReport[]): FleetReport {
  const sum = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
  };
  const merged: FleetReport = { latencies: { claim: [], heartbeat: [], cycle: [] }, calls: { claim: 0, heartbeat: 0, cycle: 0 }, errors: {}, measuredErrors: {}, samples: [], dry: 0, failedAttempts: 0, late: 0, abandoned: [], maxGapMs: 0, frames: 0, streamsEnded: 0 };
  for (const r of reports) {
    for (const op of OPERATIONS) {
      merged.latencies[op] = merged.latencies[op].concat(r.latencies[op]);
      merged.calls[op] += r.calls[op];
    }
    sum(merged.errors, r.errors);
    sum(merged.measuredErrors, r.measuredErrors);
    merged.samples.push(...r.samples);
    merged.dry += r.dry;
    merged.failedAttempts += r.failedAttempts;
    merged.late += r.late;
    merged.abandoned = merged.abandoned.concat(r.abandoned);
    merged.maxGapMs = Math.max(merged.maxGapMs, r.maxGapMs);
    merged.frames += r.frames;
    merged.streamsEnded += r.streamsEnded;
  }
  return merged;
}

interface Figures {
  agents: number;
  minutes: number;
  warmupS: number;
  humans: number;
  processes: number;
  fleet: FleetReport;
  lapsed: { all: number; wrong: number };
  serverCpuSPerAgentHour: number | undefined;
  databaseCpuSPerAgentHour: number | undefined;
  memory: { rssMiB: number; peakMiB: number } | undefined;
  growthBytesPerAgentDay: number;
  sizeBefore: number;
  sizeAfter: number;
}

function report(f: Figures, command: string, date: Date, machine: Awaited<ReturnType<typeof describeMachine>>): string {
  const seconds = f.minutes * 60;
  const rows = OPERATIONS.map((op) => {
    const sorted = [...f.fleet.latencies[op]].sort((a, b) => a - b);
    const errors = Object.entries(f.fleet.measuredErrors)
      .filter(([key]) => key.startsWith(`${op} `))
      .reduce((n, [, count]) => n + count, 0);
    return `| ${op} | ${sorted.length} | ${(sorted.length / seconds).toFixed(1)} | ${ms(percentile(sorted, 0.5))} | ${ms(percentile(sorted, 0.99))} | ${ms(sorted.at(-1))} | ${errors} |`;
  });
  const errors = Object.entries(f.fleet.errors).map(([key, count]) => `${key}: ${count}`);
  const cpu = (s: number | undefined) => (s === undefined ? '–' : `${s.toFixed(2)} s`);
  const lines = [
    `Command: \`${command}\` — ${date.toISOString()}, Baton ${machine.revision}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load average ${machine.load} before the run.`,
    `${f.agents} agents in ${f.processes} process(es), ${f.humans} humans streaming; warm-up ${f.warmupS} s, ${f.minutes} measured minutes.`,
    '',
    '| operation | calls in window | per s | p50 ms | p99 ms | max ms | errors in window |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows,
    '',
    `- Errors over the whole run: ${errors.length === 0 ? 'none' : errors.join(', ')}${f.fleet.samples.length ? ` (first: ${f.fleet.samples[0]})` : ''}; claims or cycles finding the queue empty: ${f.fleet.dry}.`,
    `- Leases lapsed wrongly (\`lease.expired\` for a lease its agent was still heartbeating on schedule): ${f.lapsed.wrong} of ${f.lapsed.all} lapsed; heartbeats later than the TTL after the last renewal: ${f.fleet.late} (longest gap between renewals ${(f.fleet.maxGapMs / 1000).toFixed(1)} s). Failed attempts simulated: ${f.fleet.failedAttempts}.`,
    `- CPU per agent-hour: server ${cpu(f.serverCpuSPerAgentHour)}, PostgreSQL backends ${cpu(f.databaseCpuSPerAgentHour)}.`,
    `- Server RSS at the end ${f.memory ? `${f.memory.rssMiB.toFixed(0)} MiB (peak ${f.memory.peakMiB.toFixed(0)} MiB)` : '–'}.`,
    `- Database size ${(f.sizeBefore / 2 ** 20).toFixed(1)} → ${(f.sizeAfter / 2 ** 20).toFixed(1)} MiB over the window: ${(f.growthBytesPerAgentDay / 2 ** 20).toFixed(2)} MiB per agent-day.`,
    `- Stream frames received in the window: ${f.fleet.frames} (${(f.fleet.frames / seconds).toFixed(0)}/s over ${f.humans} streams); streams that ended early: ${f.fleet.streamsEnded}.`,
  ];
  return lines.join('\n');
}

async function databaseSize(url: string): Promise<number> {
  return withClient(url, async (client) => Number((await client.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size')).rows[0]?.size ?? 0));
}

/**
 * The leases that ran out during the run (the expiry sweep records each as a `lease.expired` event),
 * and of them those whose agent was still keeping them alive (not in `abandoned`): wrongly lapsed.
 */
async function lapsedLeases(url: string, abandoned: readonly string[]): Promise<{ all: number; wrong: number }> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ all: string; wrong: string }>(
      "SELECT count(*) AS all, count(*) FILTER (WHERE NOT (data->>'lease_id' = ANY($1::text[]))) AS wrong FROM events WHERE type = 'lease.expired'",
      [abandoned],
    );
    return { all: Number(rows[0]?.all ?? 0), wrong: Number(rows[0]?.wrong ?? 0) };
  });
}

async function serverMemory(pid: number): Promise<{ rssMiB: number; peakMiB: number } | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  const rss = kib('VmRSS');
  const peak = kib('VmHWM');
  return Number.isFinite(rss) ? { rssMiB: rss / 1024, peakMiB: peak / 1024 } : undefined;
}

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

function sleepUntil(at: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, at - Date.now())));
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];
}

function ms(value: number | undefined): string {
  return value === undefined ? '–' : value.toFixed(1);
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

await main();
