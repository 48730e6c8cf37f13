import type { Kysely, Selectable, Transaction } from 'kysely';
import type { AgentsTable, DB } from './schema.ts';

export type AgentRow = Selectable<AgentsTable>;

export interface NewAgentRow {
  id: string;
  name: string;
  kind: 'human' | 'agent';
  scopes: string[];
  tool_allowlist: string[] | null;
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
}

export async function insertAgent(tx: Transaction<DB>, row: NewAgentRow): Promise<AgentRow> {
  return tx
    .insertInto('agents')
    .values({ ...row, updated_at: row.created_at, updated_by_id: row.created_by_id, updated_by_kind: row.created_by_kind })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function countAgents(db: Kysely<DB>): Promise<number> {
  const row = await db.selectFrom('agents').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}
