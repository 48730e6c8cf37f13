import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { analyzeChangedTables } from '../../src/store/statistics.ts';
import { listTasks, type TaskListQuery } from '../../src/store/task-list.ts';
import { engine, freshDatabase } from '../harness.ts';

/**
 * PGlite runs no autovacuum: the embedded server analyzes the tables that changed enough itself
 * (src/server.ts, every 30 s). Without statistics the planner took the default list's tasks
 * (neither deleted nor archived) for a handful and rescanned a search's matches once per task.
 */

let database: Database;
beforeAll(async () => {
  database = (await freshDatabase()).database;
  // Test setup: 2,000 tasks written straight to the table, 20 of them about a migration.
  await sql`INSERT INTO tasks (id, title, status, priority, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
    SELECT 'tsk_' || lpad(g::text, 26, '0'), 'Task ' || g || CASE WHEN g % 100 = 0 THEN ' migration plan' ELSE ' other work' END,
      'todo', 2, now(), 'usr_x', 'human', now(), 'usr_x', 'human'
    FROM generate_series(1, 2000) g`.execute(database.db);
});
afterAll(() => database.close());

/** The planner's estimate of the tasks a default list keeps. */
async function estimatedListed(): Promise<number> {
  const { rows } = await sql<{ 'QUERY PLAN': { Plan: { 'Plan Rows': number } }[] }>`
    EXPLAIN (FORMAT JSON) SELECT id FROM tasks WHERE deleted_at IS NULL AND archived_at IS NULL`.execute(database.db);
  return rows[0]?.['QUERY PLAN'][0]?.Plan['Plan Rows'] ?? 0;
}

it('gives the planner the share of tasks a list keeps, and a search finds the same either way', async () => {
  const query: TaskListQuery<'list'> = {
    columns: 'list', statuses: undefined, labels: undefined, assignee: undefined, blockedReason: undefined, parent: undefined, idPrefix: undefined,
    archived: 'hide', changedAfterSeq: undefined, beforeId: undefined, limit: 100,
  };
  const search = { q: 'migration', after: undefined };
  const first = await analyzeChangedTables(database.db);
  // On PostgreSQL the writing connection reports its counts within a second, and autovacuum may analyze first.
  if (engine === 'pglite') expect(first.analyzed).toEqual(expect.arrayContaining(['tasks', 'task_search']));
  else await sql`ANALYZE tasks`.execute(database.db);
  // Analyzed, and unchanged since: not again.
  expect((await analyzeChangedTables(database.db)).analyzed).not.toContain('tasks');
  // All 2,000 are listed; a planner without statistics guesses 1 in 40,000 (one in 200, twice).
  expect(await estimatedListed()).toBeGreaterThan(1000);
  const found = await listTasks(database.db, query, search);
  expect(found.map((t) => t.id)).toHaveLength(20);
});
