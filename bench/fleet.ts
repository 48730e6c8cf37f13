/**
 * `npm run bench:fleet -- [--agents=1000] [--minutes=10] [--warmup-s=120] [--ramp-s=60] [--humans=100] [--processes=1]
 *   [--instances=1] [--webhooks=3] [--webhook-events=lifecycle|all] [--failover-at-s=S] [--pool=10]`
 *
 * The fleet one Baton instance carries (issue 44 §1). Baton (`node src/main.ts`) runs in a child
 * process on a fresh PostgreSQL database (BENCH_DATABASE_URL's server), seeded through SQL with
 * enough todo tasks for the whole run (as bench/claims.ts seeds) and one agent principal per
 * simulated agent, each with its own token (scopes tasks:read and tasks:claim; bench/fleet-services.ts),
 * so every lease has its own holder and an agent can heartbeat and hand in only its own. The rate
 * limit is Baton's default per token (600/60 s: an agent sends about 1.2 calls a minute); no other
 * per-principal limit applies to claiming. The simulated agents run in
 * `--processes` other child processes (bench/fleet-agents.ts), over HTTP keep-alive: each holds a
 * lease (TTL 180 s), heartbeats every 60 s (one in ten with a note), hands in and claims the next
 * task every 5 minutes in one call (`leases_cycle`), 1 % of attempts failing (a call Baton refuses
 * as retryable, 503 or 429, is sent again with its key after Retry-After, doubled at each attempt, for up to 60 s, as the
 * problem's hint says; every attempt counts, each refusal as an error); the agents' first
 * claims are spread over the first `--ramp-s` seconds (60; at most the warm-up) and their cycles
 * over 5 minutes, so the rates are steady (N/60 heartbeats and N/300 cycles a second). `--humans`
 * unfiltered event streams stay open in the agents' first process. `--webhooks` node:http receivers
 * in this process answer 200 at once; each is subscribed through `POST /webhooks` (by the admin,
 * BATON_WEBHOOK_ALLOW_PRIVATE=1 so 127.0.0.1 is allowed) to one event per task change
 * (`lifecycle`: task.claimed, task.handed_in, task.attempt_failed, task.dead_lettered,
 * task.requeued, lease.expired) or to every event (`all`, heartbeats included).
 *
 * `--instances=2` (or more) starts Debian's `pgbouncer` in transaction mode in front of the
 * database (test/ops/pgbouncer.ts; as many server connections as one instance opens directly) and
 * that many Baton instances on it with BATON_DB_PREPARED_STATEMENTS=off (PgBouncer 1.18 does not
 * track prepared statements) and BATON_DATABASE_LISTEN_URL at PostgreSQL itself (LISTEN needs a
 * session, which transaction pooling does not keep); agent n and human n talk to instance n mod
 * instances.
 *
 * `--pool=N` sets each instance's BATON_DB_POOL_SIZE (Baton's default, 10, unless given; with
 * `--instances`, PgBouncer's server connections follow it).
 *
 * `--failover-at-s=S` (issue 44 §3, under the fleet's load) runs on a PostgreSQL primary and a
 * synchronous standby of its own (test/ops/replicated-postgres.ts: this machine's installation,
 * shared_buffers 128MB, fsync on, autovacuum on), Baton on both hosts with
 * `target_session_attrs=read-write`. S seconds into the window the primary is stopped as in a crash
 * and the standby promoted. Reported beside the rest: how long the promotion took, when the agents
 * got their first acknowledged write after it, and the promoted database checked against what the
 * agents were told (every lease a claim or cycle answered with is there, every lease an
 * acknowledged cycle ended is no longer active, no two leases on one task live at once). The
 * refusals while no host takes writes count as errors in the window.
 *
 * Reported over the measured minutes after the warm-up: p50/p99 per operation (calls started in
 * the window), errors, leases that lapsed (every `lease.expired` event: no simulated agent ever
 * stops heartbeating, so each one is wrong unless its agent was late, which is reported beside),
 * CPU per agent-hour of the server processes (each), of the database's backends (utime + stime from
 * /proc/<pid>/stat, backends found in pg_stat_activity every second, bench/cpu.ts) and of PgBouncer,
 * each server's RSS at the end and its peak (VmRSS, VmHWM), webhook deliveries received (repeats
 * apart) and their lag from the event's `created_at` to arrival (p50/p99), and pg_database_size
 * growth over the window scaled to one agent-day. Prints a Markdown report.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateToken } from '../src/tokens.ts';
import { seedTodoTasks } from './claims-statements.ts';
import { cpuSeconds, watchCpu } from './cpu.ts';
import { ADMIN_URL, backendPids, DB_POOL_SIZE, freshDatabase, postgresVersion } from './databases.ts';
import type { FleetPlan, FleetReport } from './fleet-agents.ts';
import { type FailoverTimes, type Figures, OPERATIONS, report } from './fleet-report.ts';
import { LIFECYCLE_EVENTS, seedAgentPrincipals, startReceiver, subscribe } from './fleet-services.ts';
import { startPgBouncer } from '../test/ops/pgbouncer.ts';
import { type ReplicatedPostgres, startReplicatedPostgres } from '../test/ops/replicated-postgres.ts';
import { Cleanup, type ServerProcess, startServer } from './processes.ts';
import { describeMachine } from './report.ts';
import { Inspector } from './server-inspector.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const AGENTS_MAIN = fileURLToPath(new URL('fleet-agents.ts', import.meta.url));
const HEARTBEAT_S = 60;
const CYCLE_S = 300;
const TTL_S = 180;
/** Baton's default BATON_RATE_LIMIT, per token: each agent has its own. */
const RATE_LIMIT = '600/60s';
/** How often the stand-in for autovacuum runs, where the server has it off. */
const VACUUM_EVERY_S = 60;

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { values } = parseArgs({
    args,
    options: {
      agents: { type: 'string', default: '1000' },
      minutes: { type: 'string', default: '10' },
      'warmup-s': { type: 'string', default: '120' },
      'ramp-s': { type: 'string', default: '60' },
      humans: { type: 'string', default: '100' },
      processes: { type: 'string', default: '1' },
      instances: { type: 'string', default: '1' },
      webhooks: { type: 'string', default: '3' },
      'webhook-events': { type: 'string', default: 'lifecycle' },
      'failover-at-s': { type: 'string' },
      pool: { type: 'string', default: String(DB_POOL_SIZE) },
    },
  });
  const agents = Number(values.agents);
  const minutes = Number(values.minutes);
  const warmupS = Number(values['warmup-s']);
  const rampS = Number(values['ramp-s']);
  const humans = Number(values.humans);
  const processes = Number(values.processes);
  const instances = Number(values.instances);
  const webhooks = Number(values.webhooks);
  const pool = Number(values.pool);
  if (!(Number.isInteger(agents) && agents > 0)) throw new Error(`--agents must be a positive integer (got ${values.agents})`);
  if (!(minutes > 0)) throw new Error(`--minutes must be a positive number (got ${values.minutes})`);
  if (!(warmupS >= 0)) throw new Error(`--warmup-s must be zero or more (got ${values['warmup-s']})`);
  if (!(rampS >= 0)) throw new Error(`--ramp-s must be zero or more (got ${values['ramp-s']})`);
  if (!(Number.isInteger(humans) && humans >= 0)) throw new Error(`--humans must be an integer of zero or more (got ${values.humans})`);
  if (!(Number.isInteger(processes) && processes > 0 && processes <= agents)) throw new Error(`--processes must be an integer from 1 to --agents (got ${values.processes})`);
  if (!(Number.isInteger(instances) && instances > 0)) throw new Error(`--instances must be a positive integer (got ${values.instances})`);
  if (!(Number.isInteger(pool) && pool > 0)) throw new Error(`--pool must be a positive integer (got ${values.pool})`);
  if (!(Number.isInteger(webhooks) && webhooks >= 0)) throw new Error(`--webhooks must be an integer of zero or more (got ${values.webhooks})`);
  if (values['webhook-events'] !== 'lifecycle' && values['webhook-events'] !== 'all') throw new Error(`--webhook-events must be lifecycle or all (got ${values['webhook-events']})`);
  const eventTypes = values['webhook-events'] === 'all' ? null : LIFECYCLE_EVENTS;
  const failoverAtS = values['failover-at-s'] === undefined ? undefined : Number(values['failover-at-s']);
  if (failoverAtS !== undefined && !(failoverAtS > 0 && failoverAtS < minutes * 60)) throw new Error(`--failover-at-s must fall inside the measured window, 0 to ${minutes * 60} s (got ${values['failover-at-s']})`);
  if (failoverAtS !== undefined && instances > 1) throw new Error('--failover-at-s runs one instance on the replicated pair directly; drop --instances');

  const machine = await describeMachine(await postgresVersion());
  if (Number(machine.load) > machine.cores / 2) log(`warning: load average ${machine.load} on ${machine.cores} cores — the numbers will be high and noisy`);
  const date = new Date();
  const token = generateToken();
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    // A failover run makes its own primary and synchronous standby; its databases go with their directory.
    const cluster = failoverAtS === undefined ? undefined : await startReplicatedPostgres({ sharedBuffers: '128MB', durable: true });
    if (cluster) cleanup.add(() => cluster.destroy());
    // Where the admin connection and this process's own reads go: BENCH_DATABASE_URL's server, or the
    // pair's primary until the failover and the promoted standby after it.
    let adminUrl = cluster ? cluster.hostUrl(cluster.primaryPort, 'postgres') : ADMIN_URL;
    let database = await freshDatabase('postgres', `baton_bench_fleet_${randomBytes(4).toString('hex')}`, token, cluster ? new Cleanup() : cleanup, adminUrl);
    // Every agent's first task, and one per cycle of the run (ramp, warm-up and window), with a fifth to spare.
    const runS = warmupS + minutes * 60;
    const tasks = Math.ceil((agents + (agents * runS) / CYCLE_S) * 1.2) + 100;
    const seeding = performance.now();
    await seedTodoTasks(database.url, tasks);
    const tokens = await seedAgentPrincipals(database.url, agents);
    log(`seeded ${tasks} todo tasks and ${agents} agent principals in ${((performance.now() - seeding) / 1000).toFixed(1)} s`);
    if (cluster) {
      await cluster.addSynchronousStandby();
      log(`a synchronous standby follows the primary (ports ${cluster.primaryPort}, ${cluster.standbyPort}); the primary stops ${failoverAtS} s into the window`);
    }

    // One instance talks to PostgreSQL directly; several share PgBouncer's server connections, as many as one instance opens (pool + rate counters).
    const pgbouncer = instances > 1 ? await startPgBouncer(database.url, pool + Math.ceil(pool / 2)).then((bouncer) => (cleanup.add(() => bouncer.stop()), bouncer)) : undefined;
    const env = {
      PORT: '0',
      HOST: '127.0.0.1',
      BATON_LOG_LEVEL: 'warn',
      BATON_BOOTSTRAP_TOKEN: token,
      BATON_DB_POOL_SIZE: String(pool),
      BATON_RATE_LIMIT: RATE_LIMIT,
      BATON_WEBHOOK_ALLOW_PRIVATE: '1',
      BATON_SECRET_KEY: randomBytes(32).toString('hex'),
      DATABASE_URL: pgbouncer ? pgbouncer.through(database.url) : cluster ? cluster.url(database.name) : database.url,
      // LISTEN needs a session, which transaction pooling does not keep: it goes to PostgreSQL directly.
      ...(pgbouncer ? { BATON_DB_PREPARED_STATEMENTS: 'off', BATON_DATABASE_LISTEN_URL: database.url } : {}),
    };
    const vacuum = await standInForAutovacuum(database.url, cleanup);
    const servers: ServerProcess[] = [];
    for (let i = 0; i < instances; i++) servers.push(await startServer([BATON_MAIN], env, cleanup));
    const urls = servers.map((s) => s.url);
    const first = servers[0];
    if (!first) throw new Error('no instance started');

    const receivers = await Promise.all(Array.from({ length: webhooks }, () => startReceiver(cleanup)));
    for (const receiver of receivers) await subscribe(first.url, token, receiver.url, eventTypes);

    const startAt = Date.now() + 2000;
    const measureFrom = startAt + warmupS * 1000;
    const measureTo = measureFrom + minutes * 60 * 1000;
    const failoverAt = failoverAtS === undefined ? undefined : measureFrom + failoverAtS * 1000;
    const base = { urls, token, total: agents, startAt, rampMs: Math.min(rampS, warmupS) * 1000, measureFrom, measureTo, heartbeatMs: HEARTBEAT_S * 1000, cycleMs: CYCLE_S * 1000, ttlS: TTL_S, failoverAt };
    const share = Math.ceil(agents / processes);
    const clients = Array.from({ length: processes }, (_, i) => {
      const from = i * share;
      const count = Math.max(0, Math.min(share, agents - from));
      return runAgents({ ...base, first: from, count, tokens: tokens.slice(from, from + count), humans: i === 0 ? humans : 0 }, cleanup);
    });
    const reports = clients.map((c) => c.report);
    log(`${agents} agents in ${processes} process(es) on ${instances} instance(s)${pgbouncer ? ' behind PgBouncer' : ''}, ${humans} humans, ${webhooks} webhook subscribers; warm-up ${warmupS} s, then ${minutes} measured minutes (ends ${new Date(measureTo).toISOString()})`);

    // The first instance's event loop and GC pauses over the window, through its inspector (opened now, before the window).
    const inspector = await Inspector.attach(first.pid);
    cleanup.add(async () => inspector.close());
    await sleepUntil(measureFrom);
    await inspector.watchLoop();
    const sizeBefore = await databaseSize(database.url);
    const groupsBefore = await heartbeatGroups(urls, token);
    // The first server and the backends are watched every second; the other servers and PgBouncer live the whole run, so two readings suffice.
    const clientPids = clients.flatMap((c) => (c.pid === undefined ? [] : [c.pid]));
    const others = [...servers.slice(1).map((s) => s.pid), ...(pgbouncer ? [pgbouncer.pid] : [])];
    // Across a failover the stopped primary cannot be asked: its backends' CPU is counted until it stops.
    const cpu = await watchCpu(first.pid, () => (cluster ? backendPids(database, adminUrl).catch(() => []) : backendPids(database, adminUrl)));
    const failover =
      cluster && failoverAt !== undefined
        ? failOver(cluster, failoverAt).then((times) => {
            adminUrl = cluster.hostUrl(cluster.standbyPort, 'postgres');
            database = { ...database, url: cluster.hostUrl(cluster.standbyPort, database.name) };
            log(`failover: the primary stopped at ${new Date(times.stoppedAt).toISOString()}, the standby took writes ${times.promotedAt - times.stoppedAt} ms later`);
            return times;
          })
        : undefined;
    // Awaited after the window; a failed step is reported then, not as an unhandled rejection now.
    failover?.catch(() => undefined);
    const othersBefore = await cpuSeconds(others);
    const clientsBefore = await cpuSeconds(clientPids);
    await sleepUntil(measureTo);
    const loop = await inspector.loopReport();
    const used = await cpu.stop();
    const othersAfter = await cpuSeconds(others);
    // Read at the window's end, before the clients finish their last calls and exit.
    const clientsAfter = await cpuSeconds(clientPids);
    const sizeAfter = await databaseSize(database.url);
    const groupsAfter = await heartbeatGroups(urls, token);
    const memories = await Promise.all(servers.map((s) => serverMemory(s.pid)));
    const fleet = merge(await Promise.all(reports));
    const switched = await failover;
    const lapsed = await lapsedLeases(database.url, fleet.abandoned);
    const states = await deliveryStates(database.url);
    for (const server of servers) await server.stop();

    const agentHours = (agents * minutes) / 60;
    const otherCpu = (pid: number | undefined) => {
      const before = pid === undefined ? undefined : othersBefore?.get(pid);
      const after = pid === undefined ? undefined : othersAfter?.get(pid);
      return before === undefined || after === undefined ? undefined : (after - before) / agentHours;
    };
    const instanceCpu = servers.map((s, i) => (i === 0 ? (used ? used.ownSeconds / agentHours : undefined) : otherCpu(s.pid)));
    const received = receivers.map((r) => r.received(measureFrom, measureTo));
    const figures: Figures = {
      agents,
      minutes,
      warmupS,
      humans,
      processes,
      rateLimit: RATE_LIMIT,
      fleet,
      lapsed,
      serverCpuSPerAgentHour: instanceCpu.every((c) => c !== undefined) ? instanceCpu.reduce<number>((a, c) => a + (c ?? 0), 0) : undefined,
      databaseCpuSPerAgentHour: used ? (used.seconds - used.ownSeconds) / agentHours : undefined,
      instances: servers.map((_, i) => ({ cpuSPerAgentHour: instanceCpu[i], memory: memories[i] })),
      pgbouncer: pgbouncer !== undefined,
      pgbouncerCpuSPerAgentHour: otherCpu(pgbouncer?.pid),
      clientsCpuSPerAgentHour: clientsBefore && clientsAfter ? clientPids.reduce((sum, pid) => sum + (clientsAfter.get(pid) ?? 0) - (clientsBefore.get(pid) ?? 0), 0) / agentHours : undefined,
      webhooks: {
        subscribers: webhooks,
        eventTypes,
        received: received.map((r) => r.count - r.repeats),
        repeats: received.reduce((n, r) => n + r.repeats, 0),
        lags: received.flatMap((r) => r.lags),
        states,
      },
      autovacuum: vacuum.passes === undefined ? 'on' : `off on this server: every ${VACUUM_EVERY_S} s the benchmark ran VACUUM and ANALYZE on the tables autovacuum would, by its thresholds (${vacuum.passes()} passes)`,
      failuresInTime: failuresInTime(fleet.failedAt, measureFrom, vacuum.startedAt),
      loop,
      heartbeatGroups: groupsBefore && groupsAfter ? { calls: groupsAfter.calls - groupsBefore.calls, groups: groupsAfter.groups - groupsBefore.groups } : undefined,
      growthBytesPerAgentDay: ((sizeAfter - sizeBefore) / agentHours) * 24,
      sizeBefore,
      sizeAfter,
      failover: switched && fleet.acknowledged ? { ...switched, ...(await checkAcknowledged(database.url, fleet.acknowledged)), ...outage(fleet.acknowledged.times, switched) } : undefined,
    };
    const command = `npm run bench:fleet -- ${args.join(' ')}`.trim();
    process.stdout.write(`\n${report(figures, command, date, machine)}\n`);
  } finally {
    await cleanup.run();
  }
}

/**
 * Where the window's failed calls fell: a count per 10 s of the window where there were any, and
 * when the VACUUM stand-in's passes began (seconds into the window), to tell bursts from a steady drip.
 */
function failuresInTime(failedAt: readonly number[], measureFrom: number, vacuums: readonly number[]): string | undefined {
  if (failedAt.length === 0) return undefined;
  const slots = new Map<number, number>();
  for (const at of failedAt) {
    const slot = Math.floor((at - measureFrom) / 10_000) * 10;
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
  }
  const counts = [...slots].sort(([a], [b]) => a - b).map(([slot, n]) => `${slot}–${slot + 10} s: ${n}`);
  const passes = vacuums.map((at) => Math.round((at - measureFrom) / 1000)).filter((s) => s >= 0);
  return `${counts.join(', ')}${passes.length ? `; VACUUM passes began at ${passes.map((s) => `${s} s`).join(', ')}` : ''}`;
}

/** Forks one agents process: its pid, and its report once it ends; the process is killed on cleanup. */
function runAgents(plan: FleetPlan, cleanup: Cleanup): { pid: number | undefined; report: Promise<FleetReport> } {
  const child = fork(AGENTS_MAIN, [], { execPath: process.execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  child.send(plan);
  const report = new Promise<FleetReport>((resolve, reject) => {
    child.once('message', (message: { report?: FleetReport; error?: string }) => (message.report ? resolve(message.report) : reject(new Error(`agents process: ${message.error}`))));
    child.once('exit', (code) => reject(new Error(`agents process exited with code ${code} before reporting`)));
  });
  return { pid: child.pid, report };
}

function merge(reports: FleetReport[]): FleetReport {
  const sum = (into: Record<string, number>, from: Record<string, number>) => {
    for (const [key, value] of Object.entries(from)) into[key] = (into[key] ?? 0) + value;
  };
  const merged: FleetReport = { latencies: { claim: [], heartbeat: [], cycle: [] }, calls: { claim: 0, heartbeat: 0, cycle: 0 }, errors: {}, measuredErrors: {}, failedAt: [], samples: [], dry: 0, failedAttempts: 0, late: 0, abandoned: [], maxGapMs: 0, frames: 0, streamsEnded: 0 };
  if (reports.some((r) => r.acknowledged)) merged.acknowledged = { leases: [], ended: [], times: [] };
  for (const r of reports) {
    for (const op of OPERATIONS) {
      merged.latencies[op] = merged.latencies[op].concat(r.latencies[op]);
      merged.calls[op] += r.calls[op];
    }
    sum(merged.errors, r.errors);
    sum(merged.measuredErrors, r.measuredErrors);
    merged.failedAt = merged.failedAt.concat(r.failedAt);
    merged.samples.push(...r.samples);
    merged.dry += r.dry;
    merged.failedAttempts += r.failedAttempts;
    merged.late += r.late;
    merged.abandoned = merged.abandoned.concat(r.abandoned);
    merged.maxGapMs = Math.max(merged.maxGapMs, r.maxGapMs);
    merged.frames += r.frames;
    merged.streamsEnded += r.streamsEnded;
    if (merged.acknowledged && r.acknowledged) {
      // concat, not push(...): tens of thousands of arguments overflow the stack.
      merged.acknowledged = {
        leases: merged.acknowledged.leases.concat(r.acknowledged.leases),
        ended: merged.acknowledged.ended.concat(r.acknowledged.ended),
        times: merged.acknowledged.times.concat(r.acknowledged.times),
      };
    }
  }
  return merged;
}

/**
 * A production PostgreSQL runs autovacuum, which keeps the planner's statistics fresh and the
 * updated rows' dead versions pruned; CI's server runs with `autovacuum = off`. There, a fleet's
 * tables would keep the statistics of the seeding (no leases, no events) and grow dead rows for the
 * whole run, which is not what an operator's server does. So when autovacuum is off, this does
 * autovacuum's work in its place: every VACUUM_EVERY_S (autovacuum's own nap is a minute) it reads
 * each table's counts and VACUUMs or ANALYZEs the tables autovacuum would, by the server's own
 * thresholds (`tablesDue`), throttled as autovacuum is. Its backend is the database's, so its CPU
 * counts in the database's figure. (Until 2026-12-01 it ran VACUUM (ANALYZE) on every table each
 * minute, whether autovacuum would have or not.)
 */
async function standInForAutovacuum(url: string, cleanup: Cleanup): Promise<{ passes: (() => number) | undefined; startedAt: number[] }> {
  const on = await withClient(url, async (client) => (await client.query<{ autovacuum: string }>('SHOW autovacuum')).rows[0]?.autovacuum === 'on');
  if (on) return { passes: undefined, startedAt: [] };
  log(`autovacuum is off on this PostgreSQL: every ${VACUUM_EVERY_S} s the benchmark VACUUMs and ANALYZEs the tables autovacuum would, by its thresholds`);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  // Throttled as autovacuum is (autovacuum_vacuum_cost_delay's default): unthrottled, a pass took a
  // core for 4-6 s each minute at 20,000 agents, which no operator's autovacuum spends at once.
  await client.query("SET vacuum_cost_delay = '2ms'");
  let passes = 0;
  const startedAt: number[] = [];
  let running: Promise<unknown> = Promise.resolve();
  const pass = async (): Promise<void> => {
    const due = await tablesDue(client);
    log(`autovacuum stand-in: ${due.map((table) => `${table.vacuum ? 'V' : ''}${table.analyze ? 'A' : ''} ${table.name}`).join(', ') || 'nothing due'}`);
    for (const table of due) {
      const what = table.vacuum && table.analyze ? 'VACUUM (ANALYZE)' : table.vacuum ? 'VACUUM' : 'ANALYZE';
      await client.query(`${what} ${table.name}`);
    }
  };
  const timer = setInterval(() => {
    startedAt.push(Date.now());
    running = pass().then(
      () => passes++,
      (error: unknown) => log(`VACUUM failed: ${String(error)}`),
    );
  }, VACUUM_EVERY_S * 1000);
  cleanup.add(async () => {
    clearInterval(timer);
    await running;
    await client.end();
  });
  return { passes: () => passes, startedAt };
}

/**
 * The tables autovacuum would VACUUM or ANALYZE now, by the rules and settings it uses (PostgreSQL
 * 13 and later): dead rows above `autovacuum_vacuum_threshold` + `autovacuum_vacuum_scale_factor` ×
 * rows, or rows inserted since the last vacuum above the `_insert_` pair; rows changed since the
 * last analyse above the `analyze` pair. A table never analysed counts as empty, as autovacuum
 * counts it. Names come back quoted, ready for the statement.
 */
async function tablesDue(client: pg.Client): Promise<{ name: string; vacuum: boolean; analyze: boolean }[]> {
  // Autovacuum's one test, `count` over `autovacuum_<kind>_threshold` + `_scale_factor` × rows.
  const past = (count: string, kind: string) =>
    `s.${count} > current_setting('autovacuum_${kind}_threshold')::float8 + current_setting('autovacuum_${kind}_scale_factor')::float8 * greatest(c.reltuples, 0)`;
  const { rows } = await client.query<{ name: string; vacuum: boolean; analyze: boolean }>(
    `SELECT format('%I.%I', s.schemaname, s.relname) AS name,
       ${past('n_dead_tup', 'vacuum')} OR ${past('n_ins_since_vacuum', 'vacuum_insert')} AS vacuum,
       ${past('n_mod_since_analyze', 'analyze')} AS analyze
     FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid`,
  );
  return rows.filter((row) => row.vacuum || row.analyze);
}

/**
 * At `at`, stops the primary at once, as in a crash (`pg_ctl stop -m immediate`), then promotes the
 * standby, as test/ops/failover.test.ts does: promoted first, the old primary would still take
 * sessions whose commits wait on a standby that left. Epoch ms of each step.
 */
async function failOver(cluster: ReplicatedPostgres, at: number): Promise<FailoverTimes> {
  await sleepUntil(at);
  const stoppedAt = Date.now();
  await cluster.stopPrimary();
  const promotingAt = Date.now();
  await cluster.promoteStandby();
  return { stoppedAt, promotingAt, promotedAt: Date.now() };
}

/**
 * What the agents were told against what the promoted database holds: acknowledged leases missing
 * (a lost claim), leases a cycle ended that are still active (a lost hand-in), and pairs of leases
 * on one task live at the same time (a task claimed twice).
 */
async function checkAcknowledged(url: string, acknowledged: NonNullable<FleetReport['acknowledged']>): Promise<Pick<NonNullable<Figures['failover']>, 'leases' | 'missing' | 'ended' | 'notEnded' | 'overlapping'>> {
  return withClient(url, async (client) => {
    const count = async (text: string, values: unknown[] = []) => Number((await client.query<{ n: string }>(text, values)).rows[0]?.n ?? 0);
    const missing = await count('SELECT count(*) AS n FROM unnest($1::text[]) AS a(id) WHERE NOT EXISTS (SELECT 1 FROM leases WHERE leases.id = a.id)', [acknowledged.leases]);
    const notEnded = await count("SELECT count(*) AS n FROM leases WHERE id = ANY($1::text[]) AND state = 'active'", [acknowledged.ended]);
    const overlapping = await count(
      "SELECT count(*) AS n FROM leases a JOIN leases b ON b.task_id = a.task_id AND a.id < b.id WHERE a.acquired_at < coalesce(b.ended_at, 'infinity') AND b.acquired_at < coalesce(a.ended_at, 'infinity')",
    );
    return { leases: acknowledged.leases.length, missing, ended: acknowledged.ended.length, notEnded, overlapping };
  });
}

/** The failover as the agents saw it: the last write acknowledged before the primary stopped, and the first after the promotion (epoch ms). */
function outage(times: readonly number[], failover: FailoverTimes): Pick<NonNullable<Figures['failover']>, 'lastBefore' | 'firstAfter'> {
  const sorted = [...times].sort((a, b) => a - b);
  return { lastBefore: sorted.filter((t) => t <= failover.stoppedAt).at(-1), firstAfter: sorted.find((t) => t >= failover.promotedAt) };
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

/** The webhook deliveries' rows per state (queued and pending ones are the backlog). */
async function deliveryStates(url: string): Promise<Record<string, number>> {
  return withClient(url, async (client) => {
    const { rows } = await client.query<{ state: string; n: string }>('SELECT state, count(*) AS n FROM webhook_deliveries GROUP BY state ORDER BY state');
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  });
}

/** The instances' heartbeat group counters together, read from /metrics (the bootstrap admin may); undefined when one does not serve them. */
async function heartbeatGroups(urls: readonly string[], token: string): Promise<{ calls: number; groups: number } | undefined> {
  let calls = 0;
  let groups = 0;
  for (const url of urls) {
    const text = await fetch(new URL('/metrics', url), { headers: { authorization: `Bearer ${token}` } }).then((r) => (r.ok ? r.text() : ''), () => '');
    const read = (name: string) => /^(\S+)\{operation="leases_heartbeat"\} (\d+)/m.exec(text.split('\n').filter((l) => l.startsWith(name + '{')).join('\n'))?.[2];
    const c = read('baton_write_group_calls_total');
    const g = read('baton_write_groups_total');
    if (c === undefined || g === undefined) return undefined;
    calls += Number(c);
    groups += Number(g);
  }
  return { calls, groups };
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

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

await main();
