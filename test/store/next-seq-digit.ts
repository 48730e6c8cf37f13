import { sql } from 'kysely';
import type { TestServer } from '../harness.ts';

/**
 * Moves the database to the next transaction whose events' seqs have one digit more (a seq is its
 * transaction's id times 2^20, store/events.ts: a digit more at transactions 954, 9537 …), burning
 * one transaction id per statement. A fresh embedded database is below 954; a long-used PostgreSQL
 * may be far from its next digit, and is not pushed there (at most `budget` ids are burnt).
 */
export async function reachNextSeqDigit(t: TestServer, budget = 5000): Promise<void> {
  const xid = async () => Number((await sql<{ x: string }>`SELECT pg_current_xact_id()::text AS x`.execute(t.database.db)).rows[0]?.x);
  const digits = (x: number) => String(x * 2 ** 20).length;
  const start = digits(await xid());
  for (let burned = 0; digits(await xid()) === start && burned < budget; burned++);
}
