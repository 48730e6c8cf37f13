/**
 * What list filters cost a PostgreSQL backend (issue 36 item 10): each combination of a list's
 * filters is a statement text of its own, and PostgreSQL keeps every prepared statement until its
 * backend ends. A connection prepares at most MAX_PREPARED_PER_CONNECTION of them; one that needs
 * more is replaced. PostgreSQL only: PGlite prepares nothing by name.
 */
import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { openPostgres } from '../../src/store/database.ts';
import { MAX_PREPARED_PER_CONNECTION } from '../../src/store/prepared-statements.ts';
import { COMPACT_TASK_COLUMNS } from '../../src/store/tasks.ts';
import { engine, freshDatabase, startTestServer, type TestServer } from '../harness.ts';
import { createTask } from '../rest/fixtures.ts';

let baton: TestServer | undefined;
afterAll(() => baton?.close());

/** Every combination of the values of each dimension, as query strings (an empty value leaves the parameter out). */
function combinations(dimensions: readonly (readonly string[])[]): string[] {
  return dimensions.reduce<string[]>((acc, values) => acc.flatMap((prefix) => values.map((v) => [prefix, v].filter(Boolean).join('&'))), ['']);
}

describe.skipIf(engine !== 'postgres')('prepared statements per connection', () => {
  it(`stay at most ${MAX_PREPARED_PER_CONNECTION} (and the backend under 16 MB) over 216 task list filter combinations, the hot reads still named`, { timeout: 300_000 }, async () => {
    const fresh = await freshDatabase();
    await fresh.database.close();
    // One connection for requests, so every statement below is prepared on it (or on the one replacing it).
    baton = await startTestServer({}, { database: openPostgres(fresh.url ?? '', 1) });
    const t = baton;
    const parent = await createTask(t, { title: 'parent', labels: ['flat'] });
    const child = await createTask(t, { title: 'child', labels: ['flat'], parent_id: parent.id });
    const backend = async () => {
      const { rows } = await sql<{ prepared: string; bytes: string }>`
        SELECT (SELECT count(*) FROM pg_prepared_statements) AS prepared,
          (SELECT sum(total_bytes) FROM pg_backend_memory_contexts)::bigint AS bytes`.execute(t.database.db);
      return { prepared: Number(rows[0]?.prepared), bytes: Number(rows[0]?.bytes) };
    };
    const queries = combinations([
      ['', 'status=todo', 'status=todo,in_progress'],
      ['', 'labels=flat'],
      ['', 'assignee=none', 'assignee=me'],
      ['', 'blocked_reason=attempts_exhausted'],
      ['', 'parent=none', `parent=${parent.id}`],
      ['', 'view=full'],
    ]);
    expect(queries).toHaveLength(216);
    let most = { prepared: 0, bytes: 0 };
    for (const query of queries) {
      const res = await t.request('GET', `/api/v1/tasks?${query}`);
      expect(res.status, res.body).toBe(200);
      const now = await backend();
      most = { prepared: Math.max(most.prepared, now.prepared), bytes: Math.max(most.bytes, now.bytes) };
    }
    expect(most.prepared).toBeLessThanOrEqual(MAX_PREPARED_PER_CONNECTION);
    expect(most.bytes).toBeLessThan(16 * 2 ** 20);

    // The fixed text of a task read is prepared on whichever connection serves it now.
    for (let i = 0; i < 2; i++) expect((await t.request('GET', `/api/v1/tasks/${child.id}`)).status).toBe(200);
    const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(t.database.db);
    expect(rows.map((r) => r.statement)).toContain(`SELECT ${COMPACT_TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`);
  });
});
