import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendStatement, type Tx } from '../../src/store/connection.ts';
import type { Database } from '../../src/store/database.ts';
import { freshDatabase } from '../harness.ts';

describe('store transactions: the query builder and fixed statements on one connection', () => {
  let database: Database;
  beforeAll(async () => {
    ({ database } = await freshDatabase());
  });
  afterAll(() => database.close());

  const principal = (id: string) =>
    database.db.selectFrom('agents').select('name').where('id', '=', id).executeTakeFirst();

  const insertAgent = (tx: Tx, id: string) =>
    tx
      .insertInto('agents')
      .values({ id, name: id, kind: 'agent', scopes: [], tool_allowlist: null, rate_limit: null, created_at: new Date(), created_by_id: 'agt_test', created_by_kind: 'system', updated_at: new Date(), updated_by_id: 'agt_test', updated_by_kind: 'system' })
      .execute();

  it('runs both kinds of statement inside the same transaction, and commits them together', async () => {
    const seen = await database.db.transaction().execute(async (tx) => {
      await insertAgent(tx, 'agt_tx_both');
      // Uncommitted, so only a statement on the same connection can see it.
      const { rows } = await sendStatement<{ name: string }>(tx, 'SELECT name FROM agents WHERE id = $1', ['agt_tx_both']);
      return rows;
    });
    expect(seen).toEqual([{ name: 'agt_tx_both' }]);
    expect(await principal('agt_tx_both')).toEqual({ name: 'agt_tx_both' });
  });

  it('rolls back everything when the work throws after its last statement, and passes the error on', async () => {
    const failure = new Error('fails after writing');
    await expect(
      database.db.transaction().execute(async (tx) => {
        await insertAgent(tx, 'agt_tx_undone');
        await sendStatement(tx, `UPDATE agents SET name = 'renamed' WHERE id = $1`, ['agt_tx_undone']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await principal('agt_tx_undone')).toBeUndefined();
  });

  it('keeps serving other requests while a transaction is open, and they do not see its writes', async () => {
    let inside!: () => void;
    const opened = new Promise<void>((resolve) => (inside = resolve));
    let finish!: () => void;
    const held = new Promise<void>((resolve) => (finish = resolve));
    const open = database.db.transaction().execute(async (tx) => {
      await insertAgent(tx, 'agt_tx_open');
      inside();
      await held;
    });
    await opened;
    if (database.engine === 'postgres') {
      // The pool answers at once, from another connection, without the uncommitted row.
      expect(await principal('agt_tx_open')).toBeUndefined();
      finish();
      await open;
    } else {
      // PGlite has one connection: the read waits for the commit, then sees the row.
      const read = principal('agt_tx_open');
      finish();
      await open;
      expect(await read).toEqual({ name: 'agt_tx_open' });
    }
  });

  it('sends a fixed statement outside any transaction on the pool (PostgreSQL) or the one connection (PGlite)', async () => {
    const { rows } = await sendStatement<{ n: number }>(database.db, 'SELECT count(*)::int AS n FROM agents WHERE id = $1', ['agt_tx_both']);
    expect(rows).toEqual([{ n: 1 }]);
    const updated = await database.db.transaction().execute((tx) => sendStatement(tx, `UPDATE agents SET name = name WHERE id = $1`, ['agt_tx_both']));
    expect(updated.affected).toBe(1);
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
  });
});
