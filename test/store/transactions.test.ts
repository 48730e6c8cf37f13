import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendStatement, type Tx, transaction } from '../../src/store/connection.ts';
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
    const seen = await transaction(database.db, async (tx) => {
      await insertAgent(tx, 'agt_tx_both');
      // Uncommitted, so only a statement on the same connection can see it.
      const { rows } = await sendStatement<{ name: string }>(tx, 'SELECT name FROM agents WHERE id = $1', ['agt_tx_both']);
      return rows;
    });
    expect(seen).toEqual([{ name: 'agt_tx_both' }]);
    expect(await principal('agt_tx_both')).toEqual({ name: 'agt_tx_both' });
  });

  it('rolls back everything when the work throws, and passes the error on', async () => {
    const failure = new Error('fails after writing');
    await expect(
      transaction(database.db, async (tx) => {
        await insertAgent(tx, 'agt_tx_undone');
        await sendStatement(tx, `UPDATE agents SET name = 'renamed' WHERE id = $1`, ['agt_tx_undone']);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await principal('agt_tx_undone')).toBeUndefined();
  });

  it('refuses a statement on a transaction that has ended, so a kept reference cannot write elsewhere', async () => {
    const kept = await transaction(database.db, (tx) => Promise.resolve(tx));
    await expect(sendStatement(kept, 'SELECT 1', [])).rejects.toThrow('a statement was sent on a transaction that has ended');
    await expect(insertAgent(kept, 'agt_tx_late')).rejects.toThrow('a statement was sent on a transaction that has ended');
    expect(await principal('agt_tx_late')).toBeUndefined();
  });

  it('does not nest transactions', async () => {
    await expect(transaction(database.db, (tx) => transaction(tx, () => Promise.resolve()))).rejects.toThrow('a transaction cannot open inside another');
    await expect(transaction(database.db, (tx) => tx.transaction().execute(() => Promise.resolve()))).rejects.toThrow('never nested');
  });

  it('sends a fixed statement outside any transaction on the pool (PostgreSQL) or the one connection (PGlite)', async () => {
    const { rows } = await sendStatement<{ n: number }>(database.db, 'SELECT count(*)::int AS n FROM agents WHERE id = $1', ['agt_tx_both']);
    expect(rows).toEqual([{ n: 1 }]);
    const updated = await transaction(database.db, (tx) => sendStatement(tx, `UPDATE agents SET name = name WHERE id LIKE 'agt_tx_%'`, []));
    expect(updated.affected).toBe(1);
    expect((await sql<{ one: number }>`SELECT 1 AS one`.execute(database.db)).rows).toEqual([{ one: 1 }]);
  });
});
