import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.ts';
import { PreparingClient, THEN_COMMIT } from '../../src/store/prepared-client.ts';
import { engine, freshDatabase } from '../harness.ts';

/** The pg connection's message events, which pg's type declarations leave out. */
interface WithConnection {
  connection: { on(event: 'readyForQuery', listener: () => void): void };
}

describe.skipIf(engine === 'pglite')('begin and commit take no round trip of their own (PostgreSQL)', () => {
  let database: Database;
  let url: string;
  let client: PreparingClient;
  /** ReadyForQuery messages the server sent: one per round trip. */
  let roundTrips = 0;

  beforeAll(async () => {
    const fresh = await freshDatabase();
    database = fresh.database;
    url = fresh.url ?? '';
  });
  afterAll(() => database.close());

  beforeEach(async () => {
    client = new PreparingClient({ connectionString: url });
    await client.connect();
    await client.query('CREATE TEMP TABLE notes (n int PRIMARY KEY)');
    (client as unknown as WithConnection).connection.on('readyForQuery', () => roundTrips++);
    roundTrips = 0;
  });
  afterEach(() => client.end());

  const notes = async () => (await client.query<{ n: number }>('SELECT n FROM notes ORDER BY n')).rows.map((row) => row.n);

  it('sends begin with the first statement: begin, one statement and commit take two round trips', async () => {
    await client.query('begin');
    expect(roundTrips).toBe(0);
    const inserted = await client.query<{ n: number }>('INSERT INTO notes VALUES ($1) RETURNING n', [1]);
    expect(inserted.rows).toEqual([{ n: 1 }]);
    expect(inserted.rowCount).toBe(1);
    await client.query('commit');
    expect(roundTrips).toBe(2);
    expect(await notes()).toEqual([1]);
  });

  it('runs the first statement inside the transaction: a rollback undoes it', async () => {
    await client.query('begin');
    await client.query('INSERT INTO notes VALUES ($1)', [1]);
    await client.query('INSERT INTO notes VALUES ($1)', [2]);
    await client.query('rollback');
    expect(await notes()).toEqual([]);
  });

  it('sends nothing for a transaction that ends before its first statement', async () => {
    await client.query('begin');
    await client.query('commit');
    await client.query('begin');
    await client.query('rollback');
    expect(roundTrips).toBe(0);
  });

  it('sends begin first when the first statement has no parameters (the simple protocol cannot carry both)', async () => {
    await client.query('begin');
    await client.query('INSERT INTO notes VALUES (7)');
    await client.query('rollback');
    expect(await notes()).toEqual([]);
  });

  it('keeps the connection usable after a first statement fails, with the statement prepared once', async () => {
    await client.query('begin');
    await expect(client.query('INSERT INTO notes SELECT 1 / $1::int', [0])).rejects.toMatchObject({ code: '22012' });
    await client.query('rollback');
    await client.query('begin');
    await client.query('INSERT INTO notes SELECT 1 / $1::int', [1]);
    await client.query('commit');
    expect(await notes()).toEqual([1]);
    const prepared = await client.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = 'INSERT INTO notes SELECT 1 / $1::int'`);
    expect(prepared.rows).toEqual([{ n: 1 }]);
  });

  it('reports a first statement that cannot be parsed with its own error every time', async () => {
    for (let attempt = 0; attempt < 2; attempt++) {
      await client.query('begin');
      await expect(client.query('SELECT no_such_column FROM notes WHERE n = $1', [1])).rejects.toMatchObject({ code: '42703' });
      await client.query('rollback');
    }
  });

  it('answers through a callback as pool.query does', async () => {
    const result = await new Promise((resolve, reject) => {
      void client.query('begin', [], (error) => {
        if (error) return reject(error);
        void client.query('SELECT $1::int AS n', [5], (failure, answer) => (failure ? reject(failure) : resolve(answer.rows)));
      });
    });
    await client.query('commit');
    expect(result).toEqual([{ n: 5 }]);
  });

  it('commits with a statement marked THEN_COMMIT: begin, two statements and commit take two round trips', async () => {
    await client.query('begin');
    await client.query('INSERT INTO notes VALUES ($1)', [1]);
    const last = await client.query<{ n: number }>(`${THEN_COMMIT} INSERT INTO notes VALUES ($1) RETURNING n`, [2]);
    expect(last.rows).toEqual([{ n: 2 }]);
    await client.query('commit');
    expect(roundTrips).toBe(2);
    expect(await notes()).toEqual([1, 2]);
  });

  it('sends the whole transaction in one round trip when its only statement is marked THEN_COMMIT', async () => {
    await client.query('begin');
    await client.query(`${THEN_COMMIT} INSERT INTO notes VALUES ($1)`, [3]);
    await client.query('commit');
    expect(roundTrips).toBe(1);
    expect(await notes()).toEqual([3]);
  });

  it('commits nothing when the THEN_COMMIT statement fails, and the connection keeps working', async () => {
    await client.query('begin');
    await client.query('INSERT INTO notes VALUES ($1)', [1]);
    await expect(client.query(`${THEN_COMMIT} INSERT INTO notes VALUES ($1)`, [1])).rejects.toMatchObject({ code: '23505' });
    await client.query('rollback');
    expect(await notes()).toEqual([]);
    await client.query('begin');
    await client.query(`${THEN_COMMIT} INSERT INTO notes VALUES ($1)`, [1]);
    await client.query('commit');
    expect(await notes()).toEqual([1]);
  });

  it('refuses a statement sent after THEN_COMMIT committed, instead of running it outside the transaction', async () => {
    await client.query('begin');
    await client.query(`${THEN_COMMIT} INSERT INTO notes VALUES ($1)`, [1]);
    await expect(client.query('INSERT INTO notes VALUES ($1)', [2])).rejects.toThrow(/after .* committed/);
    expect(await notes()).toEqual([1]);
  });

  it('treats THEN_COMMIT as a comment outside a transaction', async () => {
    await client.query(`${THEN_COMMIT} INSERT INTO notes VALUES ($1)`, [1]);
    await client.query('INSERT INTO notes VALUES ($1)', [2]);
    expect(await notes()).toEqual([1, 2]);
  });
});
