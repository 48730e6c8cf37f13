/**
 * `npm run bench:streams -- [--agents=9900] [--humans=100] [--slow=5] [--rate=50] [--agent-every-s=60] [--seconds=60] [--warmup-s=10] [--processes=2] [--heap-snapshots=<dir>]`
 *
 * Live streams on one instance (issue 44 §2). Baton (`node src/main.ts`, pool of 10) runs in a child
 * process on a fresh PostgreSQL database (BENCH_DATABASE_URL's server). `--agents` agent principals,
 * each with its own token, are made through SQL (rows as `agents_create` and `tokens_create` write
 * them), and hold one `GET /events/stream?for=me` each; `--humans` unfiltered streams and `--slow`
 * unfiltered streams that stop reading once open use the bootstrap admin's token. The clients run in
 * `--processes` other child processes (bench/streams-clients.ts: raw `node:http`, one socket each;
 * the humans in the first process, the agents over the others).
 *
 * Memory: the server's RSS before the first stream and with every stream open and idle 10 s, read
 * as it is and again after a full garbage collection forced through the server's inspector
 * (`--heap-snapshots`: also a heap snapshot at both points, written to that folder, to diff).
 * Then this process writes as the admin, open loop: `--rate` task creates a second (no agent's
 * concern) and one assignment of a seeded task per agent every `--agent-every-s` (`tasks_assign`:
 * the agent's `task.assigned`); unfiltered streams get both. Latency runs from the event's
 * `created_at` (read inside the write's transaction, so a little before its commit) to the frame's
 * arrival in the client process, for the events created in the `--seconds` after `--warmup-s`;
 * for agents' frames also from the assignment's answer (after its commit). Beside them: the server's
 * and its database backends' CPU (/proc), its event-loop delay and GC pauses (perf_hooks, through the
 * inspector), the oldest transaction holding an xid on the PostgreSQL server (what a stream may
 * read waits for it), and whether the slow streams were dropped.
 * Prints a Markdown report.
 */
import { fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { generateToken, hashToken, tokenPrefix } from '../src/tokens.ts';
import { seedTodoTasks } from './claims-statements.ts';
import { type CpuUsed, cpuSeconds, watchCpu } from './cpu.ts';
import { ADMIN_URL, backendPids, DB_POOL_SIZE, freshDatabase, postgresVersion, RATE_LIMIT } from './databases.ts';
import { Cleanup, startServer } from './processes.ts';
import { describeMachine } from './report.ts';
import { Inspector, peakRssKiB, rssKiB } from './server-inspector.ts';
import type { Histogram, StreamKind, StreamsPlan, StreamsReport } from './streams-clients.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const CLIENTS_MAIN = fileURLToPath(new URL('streams-clients.ts', import.meta.url));
/** How long the open streams sit idle before the server's RSS is read. */
const IDLE_S = 10;
/** Frames of the window's last events still on their way when it ends. */
const DRAIN_S = 3;
const AGENT_SCOPES = ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const { values } = parseArgs({
    args,
    options: {
      agents: { type: 'string', default: '9900' },
      humans: { type: 'string', default: '100' },
      rate: { type: 'string', default: '50' },
      'agent-every-s': { type: 'string', default: '60' },
      seconds: { type: 'string', default: '60' },
      'warmup-s': { type: 'string', default: '10' },
      processes: { type: 'string', default: '2' },
      slow: { type: 'string', default: '5' },
      'heap-snapshots': { type: 'string' },
    },
  });
  const agents = count(values.agents, 'agents', 0);
  const humans = count(values.humans, 'humans', 0);
  const rate = count(values.rate, 'rate', 0);
  const agentEveryS = count(values['agent-every-s'], 'agent-every-s', 1);
  const seconds = count(values.seconds, 'seconds', 1);
  const warmupS = count(values['warmup-s'], 'warmup-s', 0);
  const processes = count(values.processes, 'processes', 1);
  const slow = count(values.slow, 'slow', 0);

  const machine = await describeMachine(await postgresVersion());
  const date = new Date();
  const token = generateToken();
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  try {
    const database = await freshDatabase('postgres', `baton_bench_streams_${randomBytes(4).toString('hex')}`, token, cleanup);
    const assignments = Math.ceil((agents / agentEveryS) * (warmupS + seconds + DRAIN_S)) + 100;
    await seedTodoTasks(database.url, assignments);
    const agentTokens = await seedAgents(database.url, agents);
    log(`seeded ${agents} agents with a token each and ${assignments} tasks to assign`);

    const env = { PORT: '0', HOST: '127.0.0.1', BATON_LOG_LEVEL: 'warn', BATON_BOOTSTRAP_TOKEN: token, BATON_DB_POOL_SIZE: String(DB_POOL_SIZE), BATON_RATE_LIMIT: RATE_LIMIT, DATABASE_URL: database.url };
    const server = await startServer([BATON_MAIN], env, cleanup);
    const writer = new Writer(server.url, token);
    await writer.createTask('warm-up');
    await sleep(2000);
    const rssBefore = await rssKiB(server.pid);
    const inspector = await Inspector.attach(server.pid);
    const settledBefore = await inspector.settled();
    const snapshots = values['heap-snapshots'];
    if (snapshots) await inspector.heapSnapshot(join(snapshots, 'before.heapsnapshot'));

    // The humans in the first process, the agents over the others (or all in one with --processes=1).
    const plans: StreamsPlan[] = Array.from({ length: processes }, () => ({ url: server.url, streams: [], concurrency: 20 }));
    for (let i = 0; i < humans; i++) plans[0]?.streams.push({ token, kind: 'human' });
    for (let i = 0; i < slow; i++) plans[0]?.streams.push({ token, kind: 'slow' });
    agentTokens.forEach((agent, i) => plans[processes === 1 ? 0 : 1 + (i % (processes - 1))]?.streams.push({ token: agent.token, kind: 'agent' }));
    const opening = performance.now();
    const first = plans.map((plan) => startClients(plan, cleanup));
    await Promise.all(first.map((client) => client.opened));
    const openS = (performance.now() - opening) / 1000;
    log(`${agents + humans} streams open in ${openS.toFixed(1)} s; idle ${IDLE_S} s`);
    const idleCpu = await watchCpu(server.pid, () => backendPids(database));
    await sleep(IDLE_S * 1000);
    const idleUsed = await idleCpu.stop();
    const rssIdle = await rssKiB(server.pid);
    const settledIdle = await inspector.settled();
    if (snapshots) await inspector.heapSnapshot(join(snapshots, 'idle.heapsnapshot'));
    // The same streams closed and opened again: what they hold once the memory the first opening
    // used and freed (kept by the allocator, so counted in RSS above) is there to be used again.
    await Promise.all(first.map((client) => client.stop()));
    // Its pool may have opened connections since, as may the tail and the LISTEN: those are not streams.
    await inspector.untilSockets(settledBefore.sockets + DB_POOL_SIZE + 2);
    const settledClosed = await inspector.settled();
    const clients = plans.map((plan) => startClients(plan, cleanup));
    await Promise.all(clients.map((client) => client.opened));
    log(`${agents + humans} streams closed and opened again; idle ${IDLE_S} s`);
    await sleep(IDLE_S * 1000);
    const settledReopened = await inspector.settled();

    const startAt = Date.now() + 500;
    const measureFrom = startAt + warmupS * 1000;
    const measureTo = measureFrom + seconds * 1000;
    for (const client of clients) client.send({ window: { from: measureFrom, to: measureTo } });
    log(`writing ${rate} task creates/s and ${(agents / agentEveryS).toFixed(1)} assignments/s; warm-up ${warmupS} s, then ${seconds} measured seconds`);
    const writing = writer.run({ startAt, until: measureTo + 1000, rate, agents: agentTokens.map((a) => a.id), agentEveryMs: agentEveryS * 1000 });
    await sleepUntil(measureFrom);
    const cpu = await watchCpu(server.pid, () => backendPids(database));
    await inspector.watchLoop();
    const oldest = await watchOldestTransactions(database.name, measureTo);
    const clientsBefore = await cpuSeconds(clients.map((client) => client.pid));
    await sleepUntil(measureTo);
    const used = await cpu.stop();
    const clientsAfter = await cpuSeconds(clients.map((client) => client.pid));
    const loop = await inspector.loopReport();
    inspector.close();
    const rssEnd = await rssKiB(server.pid);
    const rssPeak = await peakRssKiB(server.pid);
    await writing;
    await sleep(DRAIN_S * 1000);
    const reports = await Promise.all(clients.map((client) => client.report()));
    await server.stop();

    const merged = merge(reports);
    const streams = agents + humans + slow;
    const lines = [
      `Command: \`npm run bench:streams -- ${args.join(' ')}\` — ${date.toISOString()}, Baton ${machine.revision}; ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load average ${machine.load} before the run.`,
      `${agents} agent streams (\`?for=me\`, one token each) and ${humans} unfiltered streams in ${processes} client process(es); ${streams} opened in ${openS.toFixed(1)} s. Writes in the window: ${writer.inWindow(measureFrom, measureTo, 'create')} task creates and ${writer.inWindow(measureFrom, measureTo, 'assign')} assignments (${((writer.inWindow(measureFrom, measureTo, 'create') + writer.inWindow(measureFrom, measureTo, 'assign')) / seconds).toFixed(0)} events/s to every unfiltered stream), ${seconds} s after a ${warmupS} s warm-up.`,
      '',
      '| stream | frames in window | frames/s | p50 ms | p99 ms | max ms |',
      '|---|---:|---:|---:|---:|---:|',
      row('agent (`for=me`)', merged.agent, seconds),
      row('human (unfiltered)', merged.human, seconds),
      '',
      `- Agent frames from the assignment's answer (its write committed and answered) to the frame, in ms: ${afterAnswer(merged.agentFrames, writer.answered)} (negative: the frame came first).`,
      `- Oldest open transaction holding a transaction id on the PostgreSQL server, sampled every 200 ms over the window (a stream reads only events older than every such transaction, of any database): ${await oldest.summary}.`,
      `- Server RSS: ${mib(rssBefore)} MiB before the streams, ${mib(rssIdle)} MiB with ${streams} open and idle ${IDLE_S} s: **${rssBefore && rssIdle ? ((rssIdle - rssBefore) / streams).toFixed(1) : '–'} KiB per idle stream**; ${mib(rssEnd)} MiB at the window's end (peak ${mib(rssPeak)} MiB).`,
      `- Slow consumers (unfiltered streams that stop reading once open): ${slow}, dropped by the server ${merged.slowDropped.length}${merged.slowDropped.length ? `, ${Math.min(...merged.slowDropped).toFixed(0)}–${Math.max(...merged.slowDropped).toFixed(0)} s after opening` : ''} (SLOW_CLIENT_MS: 30 s without the socket draining, after the kernel's buffers fill).`,
      `- After a full garbage collection (forced through the inspector): RSS ${mib(settledBefore.rssKiB)} → ${mib(settledIdle.rssKiB)} MiB, **${((settledIdle.rssKiB - settledBefore.rssKiB) / streams).toFixed(1)} KiB per idle stream**; of it the JS heap ${((settledIdle.heapKiB - settledBefore.heapKiB) / streams).toFixed(1)} KiB (${((settledIdle.heapTotalKiB - settledBefore.heapTotalKiB) / streams).toFixed(1)} KiB committed), the C heap (glibc's \`[heap]\`) ${((settledIdle.mallocHeapKiB - settledBefore.mallocHeapKiB) / streams).toFixed(1)} KiB and external memory ${((settledIdle.externalKiB - settledBefore.externalKiB) / streams).toFixed(1)} KiB. The same streams closed (RSS ${mib(settledClosed.rssKiB)} MiB after GC) and opened again: **${((settledReopened.rssKiB - settledClosed.rssKiB) / streams).toFixed(1)} KiB per idle stream** (JS heap ${((settledReopened.heapKiB - settledClosed.heapKiB) / streams).toFixed(1)} KiB).`,
      `- The server's event loop over the window (perf_hooks, started through the inspector): delay p50 ${loop.delayP50Ms.toFixed(0)} ms, p99 ${loop.delayP99Ms.toFixed(0)} ms, max ${loop.delayMaxMs.toFixed(0)} ms; garbage collection ${loop.gcCount} pauses, ${loop.gcTotalMs.toFixed(0)} ms in all, longest ${loop.gcMaxMs.toFixed(0)} ms.`,
      `- Server CPU over the window: ${percent(used, seconds)}; with the streams idle: ${percent(idleUsed, IDLE_S)}. Client processes over the window: ${clients.map((client) => (clientsBefore && clientsAfter ? `${((((clientsAfter.get(client.pid) ?? 0) - (clientsBefore.get(client.pid) ?? 0)) / seconds) * 100).toFixed(1)} %` : '–')).join(', ')} of one core (the first holds the unfiltered streams).`,
      `- Write errors: ${writer.errors.length === 0 ? 'none' : `${writer.errors.length} (first: ${writer.errors[0]})`}; write p99 ${writer.p99().toFixed(0)} ms. Streams that ended early: ${merged.ended}${merged.failures.length ? ` (${merged.failures.join('; ')})` : ''}; frames of events outside the window: ${merged.outside}.`,
    ];
    process.stdout.write(`\n${lines.join('\n')}\n`);
  } finally {
    await cleanup.run();
  }
}

/**
 * `n` agent principals (kind agent, the scopes an agent working tasks holds) and one token each,
 * as `agents_create` and `agents_tokens_create` store them, made by the bootstrap admin in its
 * workspace. Only SHA-256 of each token is stored; the tokens are returned.
 */
async function seedAgents(url: string, n: number): Promise<{ id: string; token: string }[]> {
  const made = Array.from({ length: n }, (_, i) => ({ id: `agt_${String(i + 1).padStart(26, '0')}`, token: generateToken() }));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; workspace_id: string }>("SELECT id, workspace_id FROM agents WHERE kind = 'human' ORDER BY created_at LIMIT 1");
    const admin = rows[0];
    if (!admin) throw new Error('no bootstrap admin in the fresh database');
    await client.query(
      `INSERT INTO agents (id, name, kind, scopes, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind, workspace_id)
       SELECT id, 'bench-agent-' || ordinality, 'agent', $2, now(), $3, 'human', now(), $3, 'human', $4 FROM unnest($1::text[]) WITH ORDINALITY AS id`,
      [made.map((a) => a.id), AGENT_SCOPES, admin.id, admin.workspace_id],
    );
    await client.query(
      `INSERT INTO tokens (id, agent_id, machine, token_hash, token_prefix, scopes, created_at, created_by_id, created_by_kind, workspace_id)
       SELECT 'tok_' || substr(agent_id, 5), agent_id, 'bench', hash, prefix, $4, now(), $5, 'human', $6
       FROM unnest($1::text[], $2::bytea[], $3::text[]) AS t(agent_id, hash, prefix)`,
      [made.map((a) => a.id), made.map((a) => hashToken(a.token)), made.map((a) => tokenPrefix(a.token)), AGENT_SCOPES, admin.id, admin.workspace_id],
    );
    await client.query('ANALYZE agents; ANALYZE tokens');
  } finally {
    await client.end();
  }
  return made;
}

/** The admin's writes, open loop, with each one's kind and start time for counting the window. */
class Writer {
  readonly errors: string[] = [];
  readonly #sent: { kind: 'create' | 'assign'; at: number; ms: number }[] = [];
  /** Assigned task id → when the write's answer arrived (after its commit), in ms since the epoch. */
  readonly answered = new Map<string, number>();
  #keys = 0;
  #task = 1;

  readonly url: string;
  readonly token: string;

  constructor(url: string, token: string) {
    this.url = url;
    this.token = token;
  }

  createTask(title: string): Promise<void> {
    return this.#post('create', '/tasks', { title });
  }

  /** Writes on schedule from `startAt` until `until`: creates at `rate`/s, each agent assigned a task every `agentEveryMs`. */
  async run(plan: { startAt: number; until: number; rate: number; agents: readonly string[]; agentEveryMs: number }): Promise<void> {
    const writes: Promise<void>[] = [];
    let creates = 0;
    let assigns = 0;
    await sleepUntil(plan.startAt);
    while (Date.now() < plan.until) {
      const elapsed = Date.now() - plan.startAt;
      for (; creates < (elapsed * plan.rate) / 1000; creates++) writes.push(this.createTask(`stream bench ${creates}`));
      for (; plan.agents.length > 0 && assigns < (elapsed * plan.agents.length) / plan.agentEveryMs; assigns++) {
        const agent = plan.agents[assigns % plan.agents.length] ?? '';
        const task = `tsk_${String(this.#task++).padStart(26, '0')}`;
        writes.push(this.#post('assign', `/tasks/${task}/assign`, { assignee: agent }).then(() => void this.answered.set(task, Date.now())));
      }
      await sleep(10);
    }
    await Promise.all(writes);
  }

  inWindow(from: number, to: number, kind: 'create' | 'assign'): number {
    return this.#sent.filter((s) => s.kind === kind && s.at >= from && s.at < to).length;
  }

  p99(): number {
    const sorted = this.#sent.map((s) => s.ms).sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(0.99 * sorted.length) - 1)] ?? 0;
  }

  async #post(kind: 'create' | 'assign', path: string, body: object): Promise<void> {
    const at = Date.now();
    const t0 = performance.now();
    try {
      const response = await fetch(`${this.url}/api/v1${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json', 'idempotency-key': `streams-${this.#keys++}` },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300 && this.errors.length < 1000) this.errors.push(`${kind} ${response.status}: ${text.slice(0, 200)}`);
    } catch (error) {
      this.errors.push(`${kind}: ${(error as Error).message}`);
    }
    this.#sent.push({ kind, at, ms: performance.now() - t0 });
  }
}

interface Clients {
  pid: number;
  opened: Promise<void>;
  /** Kills the process, closing its streams; resolves once it has exited. */
  stop(): Promise<void>;
  send(message: object): void;
  report(): Promise<StreamsReport>;
}

/** Forks one clients process; it is killed on cleanup. */
function startClients(plan: StreamsPlan, cleanup: Cleanup): Clients {
  const child = fork(CLIENTS_MAIN, [], { execPath: process.execPath, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  cleanup.add(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`clients process exited with code ${code}`))));
  exited.catch(() => undefined);
  const answer = <T>(key: 'opened' | 'report') =>
    Promise.race([
      new Promise<T>((resolve, reject) => {
        const onMessage = (message: { error?: string } & Record<string, unknown>) => {
          if (message.error !== undefined) reject(new Error(`clients process: ${message.error}`));
          if (key in message) {
            child.off('message', onMessage);
            resolve(message[key] as T);
          }
        };
        child.on('message', onMessage);
      }),
      exited,
    ]);
  const opened = answer<number>('opened').then(() => undefined);
  child.send(plan);
  return {
    pid: child.pid ?? 0,
    opened,
    send: (message) => child.send(message),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const gone = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await gone;
    },
    report: () => {
      const report = answer<StreamsReport>('report');
      child.send({ report: true });
      return report;
    },
  };
}

function merge(reports: readonly StreamsReport[]): Record<StreamKind, Histogram> & { agentFrames: [string, number][]; slowDropped: number[]; outside: number; ended: number; failures: string[] } {
  const add = (into: Histogram, from: Histogram) => {
    from.buckets.forEach((n, i) => (into.buckets[i] = (into.buckets[i] ?? 0) + n));
    into.count += from.count;
  };
  const empty = (): Histogram => ({ buckets: [], count: 0 });
  const merged = { agent: empty(), human: empty(), agentFrames: [] as [string, number][], slowDropped: [] as number[], outside: 0, ended: 0, failures: [] as string[] };
  for (const r of reports) {
    add(merged.agent, r.latency.agent);
    add(merged.human, r.latency.human);
    merged.agentFrames.push(...r.agentFrames);
    merged.slowDropped.push(...r.slowDropped);
    merged.outside += r.outside;
    merged.ended += r.ended;
    merged.failures.push(...r.failures);
  }
  return merged;
}

/** p50/p99/max of (frame arrival − the assignment's answer) over the agents' frames. */
function afterAnswer(frames: readonly [string, number][], answered: ReadonlyMap<string, number>): string {
  const gaps = frames.flatMap(([task, at]) => {
    const answer = answered.get(task);
    return answer === undefined ? [] : [at - answer];
  });
  gaps.sort((a, b) => a - b);
  const at = (q: number) => gaps[Math.min(gaps.length - 1, Math.ceil(q * gaps.length) - 1)] ?? NaN;
  return `p50 ${at(0.5)}, p99 ${at(0.99)}, max ${at(1)} over ${gaps.length} frames`;
}

/**
 * Samples the age of the oldest open transaction in our database and elsewhere on the server
 * (other databases' transactions hold back what a stream may read too) until `until`; resolves
 * with their p50/max.
 */
async function watchOldestTransactions(ours: string, until: number): Promise<{ summary: Promise<string> }> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  const samples: { ours: number; others: number }[] = [];
  const done = (async () => {
    while (Date.now() < until) {
      const { rows } = await client.query<{ ours: number; others: number }>(
        `SELECT coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)) FILTER (WHERE datname = $1), 0) * 1000 AS ours,
                coalesce(max(extract(epoch FROM clock_timestamp() - xact_start)) FILTER (WHERE datname <> $1), 0) * 1000 AS others
         FROM pg_stat_activity WHERE backend_xid IS NOT NULL AND backend_type = 'client backend' AND pid <> pg_backend_pid()`,
        [ours],
      );
      if (rows[0]) samples.push({ ours: Number(rows[0].ours), others: Number(rows[0].others) });
      await sleep(200);
    }
    await client.end();
    const summary = (values: number[]) => {
      values.sort((a, b) => a - b);
      return `p50 ${(values[Math.floor(values.length / 2)] ?? 0).toFixed(0)} ms, max ${(values.at(-1) ?? 0).toFixed(0)} ms`;
    };
    return `in the bench's database ${summary(samples.map((s) => s.ours))}; in other databases ${summary(samples.map((s) => s.others))}`;
  })();
  return { summary: done };
}

function row(name: string, h: Histogram, seconds: number): string {
  const pct = (q: number) => {
    let seen = 0;
    for (const [ms, n] of h.buckets.entries()) if ((seen += n) >= Math.ceil(q * h.count)) return String(ms);
    return '–';
  };
  const max = h.buckets.findLastIndex((n) => n > 0);
  return `| ${name} | ${h.count} | ${(h.count / seconds).toFixed(0)} | ${h.count ? pct(0.5) : '–'} | ${h.count ? pct(0.99) : '–'} | ${max >= 0 ? max : '–'} |`;
}

function percent(used: CpuUsed | undefined, seconds: number): string {
  return used ? `${((used.ownSeconds / seconds) * 100).toFixed(0)} % of one core (PostgreSQL backends ${(((used.seconds - used.ownSeconds) / seconds) * 100).toFixed(0)} %)` : '–';
}

function mib(kib: number | undefined): string {
  return kib === undefined ? '–' : (kib / 1024).toFixed(0);
}

function count(text: string | undefined, name: string, min: number): number {
  const n = Number(text);
  if (!(Number.isInteger(n) && n >= min)) throw new Error(`--${name} must be an integer of ${min} or more (got ${text})`);
  return n;
}

function sleepUntil(at: number): Promise<void> {
  return sleep(Math.max(0, at - Date.now()));
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

await main();
