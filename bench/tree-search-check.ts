/**
 * A short measurement, not a benchmark run: the cost of `children` (a subquery in every task read)
 * and of a ranked search, on PostgreSQL, 20,000 tasks (2,000 of them subtasks) and 5,000 comments.
 * Usage: node bench/tree-search-check.ts [postgres url of a server where a scratch database may be made];
 * EXPLAIN=1 also prints the plan of the ranking query for a term that matches nearly every task.
 */
import pg from 'pg';
import { sql } from 'kysely';
import { openPostgres } from '../src/store/database.ts';
import { migrate } from '../src/store/migrate.ts';
import { listTasks } from '../src/store/task-list.ts';
import { TASK_COLUMNS } from '../src/store/tasks.ts';

const server = process.argv[2] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `baton_tree_search_${process.pid}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = server.replace(/\/[^/]*$/, `/${name}`);
const database = openPostgres(url, 2);
try {
  await migrate(database);
  const db = database.db;
  await sql`INSERT INTO tasks (id, title, description, status, priority, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
    SELECT 'tsk_' || lpad(i::text, 26, '0'), 'task ' || i || CASE WHEN i % 50 = 0 THEN ' login redirect' ELSE ' widget' END, 'description of task ' || i, 'todo', 2, now(), 'system', 'system', now(), 'system', 'system'
    FROM generate_series(1, 20000) i`.execute(db);
  await sql`UPDATE tasks SET parent_id = 'tsk_' || lpad(((substr(id, 5)::int % 200) + 1)::text, 26, '0') WHERE substr(id, 5)::int > 18000`.execute(db);
  await sql`INSERT INTO comments (id, task_id, body, author_id, author_kind, created_at, updated_at)
    SELECT 'cmt_' || lpad(i::text, 26, '0'), 'tsk_' || lpad((i * 4)::text, 26, '0'), 'comment ' || i || CASE WHEN i % 100 = 0 THEN ' login cookie' ELSE '' END, 'system', 'human', now(), now()
    FROM generate_series(1, 5000) i`.execute(db);
  await sql`ANALYZE`.execute(db);
  const without = TASK_COLUMNS.replace(/, \(SELECT COALESCE\(json_object_agg.*AS child_counts/, '');
  if (without === TASK_COLUMNS) throw new Error('the children counts are no longer where this script expects them');
  const time = async (label: string, text: string, values: unknown[], n: number) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const run = (v: unknown[]) => client.query({ name: label.slice(0, 60), text, values: v });
    for (let i = 0; i < Math.min(200, n); i++) await run(values);
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await run(values);
    const us = Number(process.hrtime.bigint() - started) / 1000 / n;
    await client.end();
    console.log(`${label}: ${us.toFixed(0)} µs per statement (${n} runs)`);
  };
  const leaf = 'tsk_' + '15000'.padStart(26, '0');
  const parent = 'tsk_' + '100'.padStart(26, '0');
  await time('find a task, without children counts', `SELECT ${without} FROM tasks WHERE id = $1 AND deleted_at IS NULL`, [leaf], 3000);
  await time('find a task, with children counts (no children)', `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`, [leaf], 3000);
  await time('find a task, with children counts (10 children)', `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`, [parent], 3000);
  await time('list 25, without children counts', `SELECT ${without} FROM tasks WHERE deleted_at IS NULL ORDER BY id DESC LIMIT 26`, [], 500);
  await time('list 25, with children counts', `SELECT ${TASK_COLUMNS} FROM tasks WHERE deleted_at IS NULL ORDER BY id DESC LIMIT 26`, [], 500);
  const timeSearch = async (label: string, q: string, n: number) => {
    const query = { columns: 'full' as const, statuses: undefined, labels: undefined, archived: 'hide' as const, changedAfterSeq: undefined, beforeId: undefined, limit: 25 };
    for (let i = 0; i < Math.min(20, n); i++) await listTasks(db, query, { q, after: undefined });
    const started = process.hrtime.bigint();
    for (let i = 0; i < n; i++) await listTasks(db, query, { q, after: undefined });
    console.log(`${label}: ${(Number(process.hrtime.bigint() - started) / 1e6 / n).toFixed(1)} ms per page (${n} runs)`);
  };
  await timeSearch('search "login" (400 task + 50 comment matches), first page of 25', 'login', 200);
  await timeSearch('search "cookie" (50 comment matches), first page of 25', 'cookie', 200);
  await timeSearch('search "widget" (19,600 matches), first page of 25', 'widget', 20);
  if (process.env.EXPLAIN) {
    const w = sql`websearch_to_tsquery('english', 'widget')`;
    const { rows } = await sql<{ 'QUERY PLAN': string }>`EXPLAIN (ANALYZE, BUFFERS) SELECT tasks.id, matches.rank FROM tasks JOIN (
      SELECT COALESCE(own.task_id, commented.task_id) AS task_id,
        (COALESCE(own.rank, (SELECT ts_rank(d.search_doc, ${w}) FROM task_search d WHERE d.task_id = commented.task_id)) + 0.5::real * COALESCE(commented.best, 0::real))::real AS rank
      FROM (SELECT task_id, ts_rank(search_doc, ${w}) AS rank FROM task_search WHERE search_doc @@ ${w}) own
      FULL JOIN (SELECT task_id, max(ts_rank(search_doc, ${w})) AS best FROM comments WHERE search_doc @@ ${w} GROUP BY task_id) commented ON commented.task_id = own.task_id
      ) matches ON matches.task_id = tasks.id
      WHERE deleted_at IS NULL ORDER BY 2 DESC, 1 DESC LIMIT 26`.execute(db);
    console.log(rows.map((r) => r['QUERY PLAN']).join('\n'));
  }
} finally {
  await database.close();
  await admin.query(`DROP DATABASE ${name}`);
  await admin.end();
}
