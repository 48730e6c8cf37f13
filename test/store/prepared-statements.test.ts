import type { EventEmitter } from 'node:events';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, openPostgres } from '../../src/store/database.ts';
import { findLeases, grantLeases, pickClaimable } from '../../src/store/leases.ts';
import { requeueTasks } from '../../src/store/tasks.ts';
import { engine, freshDatabase } from '../harness.ts';
import { transaction } from '../../src/store/connection.ts';
import { PreparingClient } from '../../src/store/prepared-client.ts';

describe.skipIf(engine === 'pglite')('statements on PostgreSQL (PGlite has no connection pool to prepare on)', () => {
  let database: Database;
  let url: string;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    database = fresh.database;
    url = fresh.url ?? '';
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

  it('asks for a prepared statement\'s columns on its first run on a connection only, and parses every run alike', async () => {
    const client = new PreparingClient(url);
    await client.connect();
    try {
      let described = 0;
      (client as unknown as { connection: EventEmitter }).connection.on('rowDescription', () => described++);
      const text = `SELECT $1::int AS n, $2::timestamptz AS at, ARRAY[$3::text, 'b'] AS labels, NULL::text AS nothing, 'x' AS n`;
      const at = new Date('2026-11-24T12:00:00.000Z');
      const runs: pg.QueryResult<Record<string, unknown>>[] = [];
      for (let i = 0; i < 3; i++) runs.push(await client.query<Record<string, unknown>>(text, [i, at, `a${i}`]));
      expect(described).toBe(1);
      expect(runs.map((run) => run.rows)).toEqual([0, 1, 2].map((i) => [{ n: 'x', at, labels: [`a${i}`, 'b'], nothing: null }]));
      expect(runs.map((run) => run.fields.map((field) => field.name))).toEqual(Array(3).fill(['n', 'at', 'labels', 'nothing', 'n']));
      // Rows as stock pg makes them, key order included.
      const stock = new pg.Client({ connectionString: url });
      await stock.connect();
      const expected = (await stock.query<Record<string, unknown>>(text, [2, at, 'a2']).finally(() => stock.end())).rows;
      expect(runs[2]?.rows).toEqual(expected);
      expect(Object.keys(runs[2]?.rows[0] ?? {})).toEqual(Object.keys(expected[0] ?? {}));
      expect(Object.keys(expected[0] ?? {})).toEqual(['n', 'at', 'labels', 'nothing']);
      // Another statement is described once too; one with no columns (NoData) is described each time, as before.
      await client.query('SELECT $1::text AS other', ['o']);
      await client.query('SELECT $1::text AS other', ['o']);
      expect(described).toBe(2);
      await client.query('begin');
      const update = await client.query('UPDATE tasks SET title = $1 WHERE id = $2', ['t', 'tsk_none']);
      await client.query('commit');
      expect(update.rowCount).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('commits rate counts without waiting for the disk, and everything else with it', async () => {
    const setting = async (db: typeof database.db) => (await sql<{ synchronous_commit: string }>`SHOW synchronous_commit`.execute(db)).rows[0]?.synchronous_commit;
    expect(await setting(database.counters)).toBe('off');
    expect(await setting(database.db)).toBe('on');
  });

  it('leaves statements without parameters unprepared, so scripts of several statements still run', async () => {
    const rows = await database.runScript('SELECT 1 AS one; SELECT 2 AS two');
    expect(rows).toEqual([{ two: 2 }]);
  });
});

describe.skipIf(engine === 'pglite')('claim statements keep their generic plan (PostgreSQL re-planned them on every claim)', () => {
  let database: Database;
  /** The same database through a pool of one connection, so every claim runs where the plans are counted. */
  let single: Database;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    database = fresh.database;
    single = openPostgres(fresh.url ?? '', 1);
    // A queue large enough for the planner's guesses to matter, with statistics, as in bench/claims.ts.
    await database.runScript(`
      INSERT INTO tasks (id, title, status, priority, labels, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
      SELECT 'tsk_' || lpad(g::text, 26, '0'), 'Queued ' || g, 'todo', 1, '{}', now(), 'agt_test', 'system', now(), 'agt_test', 'system'
      FROM generate_series(1, 20000) AS g;
      ANALYZE tasks;`);
  });
  afterAll(() => Promise.all([single.close(), database.close()]));

  it('plans the pick and the grant once, not on every claim', async () => {
    const { db } = single;
    // PostgreSQL tries custom plans for a statement's first five runs, then keeps the generic plan unless it looks dearer.
    for (let i = 0; i < 8; i++) {
      await transaction(db, async (tx) => {
        const now = new Date();
        const [task] = await pickClaimable(tx, { now, minPriority: 0, labels: [], limit: 1 });
        if (!task) throw new Error('the queue ran dry');
        const lease = { id: `lea_${i}`, holder_id: 'agt_test', holder_kind: 'agent' as const, token_id: null, machine: null, ttl_s: 300, expires_at: new Date(now.getTime() + 300_000) };
        await grantLeases(tx, [{ task, lease }], now);
      });
    }
    const { rows } = await sql<{ statement: string; generic_plans: string; custom_plans: string }>`
      SELECT statement, generic_plans::text, custom_plans::text FROM pg_prepared_statements
      WHERE statement LIKE '%WITH queued AS%' OR statement LIKE '%WITH granted AS%'`.execute(db);
    const plans = rows.map((row) => ({ statement: row.statement.includes('WITH queued AS') ? 'pick' : 'grant', generic: Number(row.generic_plans), custom: Number(row.custom_plans) }));
    expect(plans.map((p) => p.statement).sort()).toEqual(['grant', 'pick']);
    for (const plan of plans) expect(plan, `${plan.statement}: ${plan.custom} custom plans, ${plan.generic} generic`).toMatchObject({ custom: 5, generic: 3 });
  });
});

describe.skipIf(engine === 'pglite')('batch lease statements', () => {
  let database: Database;
  let url: string;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    database = fresh.database;
    url = fresh.url ?? '';
  });
  afterAll(() => database.close());

  // A generic plan is kept until the next ANALYZE; one made while `leases` was empty must still
  // look each lease up by primary key once the table holds a row per claim ever made.
  it('find and end each lease by primary key, even in a generic plan made while the table is empty', async () => {
    const sent: string[] = [];
    const recorded = openPostgres(url, 1, (text) => sent.push(text));
    try {
      await findLeases(recorded.db, ['lea_none']);
      await transaction(recorded.db, (tx) => requeueTasks(tx, { leaseIds: ['lea_none'], taskIds: [] }, { now: new Date(), id: 'agt_test', kind: 'agent' }));
    } finally {
      await recorded.close();
    }
    const statements = sent.filter((text) => /\bleases\b/.test(text));
    expect(statements).toHaveLength(2);
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query('SET plan_cache_mode = force_generic_plan');
      const types = ['text[]', 'timestamptz', 'text', 'text', 'text[]'];
      for (const [i, text] of statements.entries()) {
        const count = Math.max(...[...text.matchAll(/\$(\d+)/g)].map((m) => Number(m[1])));
        await client.query(`PREPARE batch_${i}(${types.slice(0, count).join(', ')}) AS ${text}`);
        const args = ["'{lea_none}'", 'now()', "'agt_test'", "'agent'", "'{}'"].slice(0, count);
        const { rows } = await client.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) EXECUTE batch_${i}(${args.join(', ')})`);
        const scans = planNodes((rows[0]?.['QUERY PLAN'] as { Plan: PlanNode }[])[0]?.Plan).filter((node) => node['Relation Name'] === 'leases');
        expect(scans.map((node) => node['Node Type']), text).not.toContain('Seq Scan');
        expect(scans.map((node) => node['Index Name']), text).toContain('leases_pkey');
      }
    } finally {
      await client.end();
    }
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function planNodes(node: PlanNode | undefined): PlanNode[] {
  return node ? [node, ...(node.Plans ?? []).flatMap(planNodes)] : [];
}
