import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { engine, freshDatabase } from '../harness.ts';

describe.skipIf(engine === 'pglite')('statements on PostgreSQL (PGlite has no connection pool to prepare on)', () => {
  let database: Database;
  beforeAll(async () => {
    ({ database } = await freshDatabase());
  });
  afterAll(() => database.close());

  it('prepares a parameterised statement once per connection and reuses it', async () => {
    const names = await database.db.connection().execute(async (db) => {
      for (let i = 0; i < 3; i++) await sql`SELECT count(*) FROM tasks WHERE id = ${`tsk_${i}`}`.execute(db);
      const { rows } = await sql<{ name: string; statement: string }>`SELECT name, statement FROM pg_prepared_statements`.execute(db);
      return rows;
    });
    const ours = names.filter((row) => row.statement === 'SELECT count(*) FROM tasks WHERE id = $1');
    expect(ours).toHaveLength(1);
    expect(ours[0]?.name).toMatch(/^b_[0-9a-f]{20}$/);
  });

  it('leaves statements without parameters unprepared, so scripts of several statements still run', async () => {
    const rows = await database.runScript('SELECT 1 AS one; SELECT 2 AS two');
    expect(rows).toEqual([{ two: 2 }]);
  });
});
