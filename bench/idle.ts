/**
 * `node bench/idle.ts [--workspaces=1,10,100] [--seconds=30] [--settle-s=20] [--engine=postgres|pglite]`
 *
 * What a Baton instance costs while nobody calls it, by how many workspaces it serves: the
 * background passes (lease expiry, overdue, schedules, ask deadlines, escalation, notifications)
 * run every second whether or not anything is due. For each count, Baton (`node src/main.ts`) starts
 * on a fresh database, the bootstrap admin creates the other workspaces through `POST /workspaces`,
 * and after `--settle-s` the server's and the database backends' CPU (bench/cpu.ts) and the
 * database's committed transactions (`pg_stat_database.xact_commit`, PostgreSQL only) are read
 * over `--seconds`. Prints a Markdown table: CPU ms per second, transactions per second.
 */
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { generateToken } from '../src/tokens.ts';
import { watchCpu } from './cpu.ts';
import { ADMIN_URL, backendPids, type DatabaseLocation, type Engine, freshDatabase, postgresVersion } from './databases.ts';
import { Cleanup, startServer } from './processes.ts';
import { describeMachine } from './report.ts';

const BATON_MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));

interface IdleFigures {
  readonly workspaces: number;
  readonly serverMsPerS: number;
  readonly databaseMsPerS: number;
  readonly commitsPerS: number | undefined;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workspaces: { type: 'string', default: '1,10,100' },
      seconds: { type: 'string', default: '30' },
      'settle-s': { type: 'string', default: '20' },
      engine: { type: 'string', default: 'postgres' },
    },
  });
  const counts = values.workspaces.split(',').map(Number);
  const seconds = Number(values.seconds);
  const settleS = Number(values['settle-s']);
  const engine = values.engine as Engine;
  if (counts.some((n) => !Number.isInteger(n) || n < 1) || !(seconds > 0) || !(settleS >= 0) || !['postgres', 'pglite'].includes(engine)) {
    throw new Error('usage: node bench/idle.ts [--workspaces=1,10,100] [--seconds=30] [--settle-s=20] [--engine=postgres|pglite]');
  }
  const started = new Date();
  const cleanup = new Cleanup();
  cleanup.runOnSignals();
  const rows: IdleFigures[] = [];
  for (const workspaces of counts) {
    try {
      rows.push(await measure(engine, workspaces, seconds, settleS, cleanup));
    } finally {
      await cleanup.run();
    }
  }
  const m = await describeMachine(await postgresVersion());
  const database = engine === 'postgres' ? `PostgreSQL ${m.postgres}` : `PGlite ${m.pglite}`;
  const machine = `Baton ${m.revision}; ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, Node ${m.node}, load average ${m.load} at the end`;
  process.stdout.write(
    [
      '',
      `Command: \`node bench/idle.ts --workspaces=${values.workspaces} --seconds=${seconds} --settle-s=${settleS} --engine=${engine}\` — ${started.toISOString()}, ${machine}, ${database}.`,
      '',
      '| workspaces | server CPU ms/s | database CPU ms/s | commits/s |',
      '|---:|---:|---:|---:|',
      ...rows.map((r) => `| ${r.workspaces} | ${r.serverMsPerS.toFixed(1)} | ${engine === 'postgres' ? r.databaseMsPerS.toFixed(1) : '(in the server)'} | ${r.commitsPerS === undefined ? '–' : r.commitsPerS.toFixed(1)} |`),
      '',
    ].join('\n'),
  );
}

/** One server with `workspaces` workspaces, its database and server removed by `cleanup` afterwards. */
async function measure(engine: Engine, workspaces: number, seconds: number, settleS: number, cleanup: Cleanup): Promise<IdleFigures> {
  const token = generateToken();
  const database = await freshDatabase(engine, `baton_bench_idle_${randomBytes(4).toString('hex')}`, token, cleanup);
  const env = {
    PORT: '0',
    HOST: '127.0.0.1',
    BATON_LOG_LEVEL: 'warn',
    BATON_BOOTSTRAP_TOKEN: token,
    BATON_SECRET_KEY: randomBytes(32).toString('hex'),
    ...(database.engine === 'postgres' ? { DATABASE_URL: database.url } : { BATON_DATA_DIR: database.dataDir }),
  };
  const server = await startServer([BATON_MAIN], env, cleanup);
  for (let n = 1; n < workspaces; n++) await createWorkspace(server.url, token, `Idle ${n}`);
  await sleep(settleS * 1000);
  const commitsBefore = await commits(database);
  const watch = await watchCpu(server.pid, () => backendPids(database));
  await sleep(seconds * 1000);
  const used = await watch.stop();
  const commitsAfter = await commits(database);
  if (!used) throw new Error('could not read the server process CPU from /proc');
  const figures = {
    workspaces,
    serverMsPerS: (used.ownSeconds * 1000) / seconds,
    databaseMsPerS: ((used.seconds - used.ownSeconds) * 1000) / seconds,
    commitsPerS: commitsBefore === undefined || commitsAfter === undefined ? undefined : (commitsAfter - commitsBefore) / seconds,
  };
  process.stderr.write(`${workspaces} workspace(s): server ${figures.serverMsPerS.toFixed(1)} ms/s, database ${figures.databaseMsPerS.toFixed(1)} ms/s\n`);
  return figures;
}

async function createWorkspace(url: string, token: string, name: string): Promise<void> {
  const response = await fetch(`${url}/api/v1/workspaces`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') },
    body: JSON.stringify({ name }),
  });
  if (response.status !== 201) throw new Error(`POST /workspaces answered ${response.status}: ${await response.text()}`);
}

/** Transactions committed in the database so far (the statistics collector's count; PostgreSQL only). */
async function commits(database: DatabaseLocation): Promise<number | undefined> {
  if (database.engine !== 'postgres') return undefined;
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    // A fresh snapshot of the statistics, not the one cached for this transaction.
    await client.query('SELECT pg_stat_clear_snapshot()');
    const row = (await client.query<{ n: string }>('SELECT xact_commit::text AS n FROM pg_stat_database WHERE datname = $1', [database.name])).rows[0];
    return row ? Number(row.n) : undefined;
  } finally {
    await client.end();
  }
}

await main();
