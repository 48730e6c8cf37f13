/**
 * CPU per statement, client and database apart: one stock `pg` connection sends each statement
 * shape N times in a row (BENCH_STATEMENTS, default 10,000) as a named prepared statement, and the
 * CPU time the client process and its PostgreSQL backend used (from /proc, not the wall clock) is
 * divided by N. Other load on the machine delays the statements but hardly moves their CPU, which
 * is why issue 21's before/after used it. Three rounds each; the first warms the JIT and the caches.
 *
 *   node bench/statement-cpu.ts         # BENCH_DATABASE_URL picks the server (it must run on this host)
 */
import pg from 'pg';
import { COMPACT_TASK_COLUMNS, TASK_COLUMNS } from '../src/store/tasks.ts';
import { generateToken } from '../src/tokens.ts';
import { cpuSeconds } from './cpu.ts';
import { freshDatabase } from './databases.ts';
import { prepared } from './pg-pools.ts';
import { Cleanup } from './processes.ts';

const N = Number(process.env.BENCH_STATEMENTS ?? 10_000);
const ROUNDS = 3;
const TASKS = 1000;

const cleanup = new Cleanup();
cleanup.runOnSignals();
try {
  const location = await freshDatabase('postgres', `bench_statement_cpu_${process.pid}`, generateToken(), cleanup);
  const client = new pg.Client({ connectionString: location.url });
  client.on('error', () => undefined);
  await client.connect();
  await client.query(`INSERT INTO tasks (id, title, description, status, priority, labels, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
    SELECT 'tsk_' || k, 'Seed task ' || k, '', 'todo', 1, '{bench}', now(), 'bench', 'human', now(), 'bench', 'human' FROM generate_series(0, ${TASKS - 1}) AS k`);
  const backend = ((await client.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0] as { pid: number }).pid;
  const find = (columns: string) => (i: number) => client.query(prepared(`SELECT ${columns} FROM tasks WHERE id = $1 AND deleted_at IS NULL`, [`tsk_${i % TASKS}`]));
  const shapes: Record<string, (i: number) => Promise<unknown>> = {
    'task read, every column (TASK_COLUMNS)': find(TASK_COLUMNS),
    'task read, compact view (COMPACT_TASK_COLUMNS)': find(COMPACT_TASK_COLUMNS),
    'begin + commit, nothing between': async () => {
      await client.query('begin');
      await client.query('commit');
    },
  };
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, send] of Object.entries(shapes)) {
      const before = process.cpuUsage();
      const backendBefore = await cpuSeconds([backend]);
      for (let i = 0; i < N; i++) await send(i);
      const used = process.cpuUsage(before);
      const backendAfter = await cpuSeconds([backend]);
      const backendUs = backendBefore && backendAfter ? (((backendAfter.get(backend) ?? 0) - (backendBefore.get(backend) ?? 0)) * 1e6) / N : Number.NaN;
      console.log(`round ${round}  ${name.padEnd(48)} client ${((used.user + used.system) / N).toFixed(0).padStart(4)} µs  database ${backendUs.toFixed(0).padStart(4)} µs`);
    }
  }
  await client.end();
} finally {
  await cleanup.run();
}
