/**
 * `npm run bench:statement-memory`: what list filter combinations cost a PostgreSQL backend (issue 36
 * item 10). Runs Baton in this process on a scratch PostgreSQL database (BENCH_DATABASE_URL, dropped
 * after) with one operation connection (BATON_DB_POOL_SIZE=1), so every request is served by the
 * same backend (or the one that replaced it); sends every combination of the task list's filters (2,592 URLs: status, labels,
 * assignee, blocked_reason, parent, since, q with and without its cursor, a plain cursor, view and
 * fields) and the other lists' filters with one token; after each request asks the backend, on that
 * connection, for its memory (`pg_backend_memory_contexts`, every context's total) and the prepared
 * statements it keeps (`pg_prepared_statements`). Prints one line of JSON: the largest a backend
 * grew, and how many backends served the run.
 *   node bench/statement-memory.ts
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.ts';
import { createServer, type Server } from '../src/server.ts';
import { generateToken } from '../src/tokens.ts';
import { emptyDatabase, postgresVersion } from './databases.ts';
import { Cleanup } from './processes.ts';

interface Page {
  data: { id: string }[];
  next_cursor: string | null;
  sync_cursor: string | null;
}

/** One backend's memory and prepared statements, read on the connection Baton's requests use. */
async function backend(server: Server): Promise<{ pid: number; bytes: number; prepared: number }> {
  const { rows } = await sql<{ pid: number; bytes: string; prepared: string }>`
    SELECT pg_backend_pid() AS pid,
      (SELECT sum(total_bytes) FROM pg_backend_memory_contexts)::bigint AS bytes,
      (SELECT count(*) FROM pg_prepared_statements) AS prepared`.execute(server.database.db);
  const row = rows[0];
  if (!row) throw new Error('the backend did not answer');
  return { pid: row.pid, bytes: Number(row.bytes), prepared: Number(row.prepared) };
}

/** Every combination of the values of each dimension, as query strings (an empty value leaves the parameter out). */
function combinations(dimensions: readonly (readonly string[])[]): string[] {
  return dimensions.reduce<string[]>((acc, values) => acc.flatMap((prefix) => values.map((v) => (v ? (prefix ? `${prefix}&${v}` : v) : prefix))), ['']);
}

const cleanup = new Cleanup();
cleanup.runOnSignals();
const { url } = await emptyDatabase(`baton_bench_statements_${randomBytes(4).toString('hex')}`, cleanup);
const token = generateToken();
const server = await createServer(
  loadConfig({
    DATABASE_URL: url,
    BATON_BOOTSTRAP_TOKEN: token,
    BATON_DB_POOL_SIZE: '1',
    BATON_RATE_LIMIT: '1000000000/60s',
    BATON_SWEEP_INTERVAL_MS: '0',
    BATON_WEBHOOK_INTERVAL_MS: '0',
    BATON_LOG_LEVEL: 'silent',
  }),
);
try {
  const headers = { authorization: `Bearer ${token}` };
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> => {
    const res = await server.app.inject({ method, url: `/api/v1${path}`, headers: { ...headers, ...(body ? { 'idempotency-key': randomBytes(8).toString('hex') } : {}) }, ...(body ? { payload: body } : {}) });
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${res.body}`);
    return res.json<T>();
  };
  const parent = await call<{ id: string }>('POST', '/tasks', { title: 'widget parent', labels: ['bench'] });
  for (let i = 0; i < 4; i++) await call('POST', '/tasks', { title: `widget ${i}`, labels: ['bench'], parent_id: parent.id });
  const plain = await call<Page>('GET', '/tasks?limit=1');
  const ranked = await call<Page>('GET', '/tasks?q=widget&limit=1');
  const since = plain.sync_cursor ?? '';
  const me = (await call<{ principal: { id: string } }>('GET', '/whoami')).principal.id;
  const start = await backend(server);

  const taskUrls = combinations([
    ['', 'status=todo', 'status=todo,in_progress'],
    ['', 'labels=bench'],
    ['', 'assignee=none', 'assignee=me'],
    ['', 'blocked_reason=attempts_exhausted'],
    ['', 'parent=none', `parent=${parent.id}`],
    ['', `since=${since}`],
    ['', `cursor=${encodeURIComponent(plain.next_cursor ?? '')}`, 'q=widget', `q=widget&cursor=${encodeURIComponent(ranked.next_cursor ?? '')}`],
    ['', 'view=full', 'fields=description'],
  ]).map((query) => `/tasks?${query}`);
  const otherUrls = [
    ...combinations([['', `since=${since}`], ['', 'order=asc'], ['', 'types=task.created', 'types=task.created,task.updated'], ['', 'view=full'], ['', `subject=${parent.id}`]]).map((q) => `/events?${q}`),
    ...combinations([['', `holder=${me}`], ['', 'state=active', 'state=ended'], ['', `task_id=${parent.id}`]]).map((q) => `/leases?${q}`),
    ...combinations([['', 'status=pending', 'status=approved']]).map((q) => `/approvals?${q}`),
    ...combinations([['', 'kind=agent', 'kind=human']]).map((q) => `/agents?${q}`),
  ];
  // After every request: the backend serving them may be replaced (a connection full of prepared
  // statements is closed), so the figure is the largest any of them reached.
  const pids = new Set([start.pid]);
  let peak = start;
  for (const path of [...taskUrls, ...otherUrls]) {
    await call('GET', path);
    const now = await backend(server);
    pids.add(now.pid);
    if (now.bytes > peak.bytes) peak = now;
  }
  const end = await backend(server);
  const mib = (bytes: number) => Math.round((bytes / 2 ** 20) * 10) / 10;
  const version = await postgresVersion();
  process.stdout.write(
    `${JSON.stringify({
      postgres: version,
      urls: taskUrls.length + otherUrls.length,
      task_list_urls: taskUrls.length,
      backend_mib_start: mib(start.bytes),
      backend_mib_peak: mib(peak.bytes),
      prepared_at_peak: peak.prepared,
      backend_mib_end: mib(end.bytes),
      prepared_end: end.prepared,
      backends: pids.size,
    })}\n`,
  );
} finally {
  await server.close();
  await cleanup.run();
}
