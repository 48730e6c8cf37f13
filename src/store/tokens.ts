import type { Kysely, Transaction } from 'kysely';
import type { DB } from './schema.ts';

export interface NewTokenRow {
  id: string;
  agent_id: string;
  machine: string;
  token_hash: Uint8Array;
  token_prefix: string;
  scopes: string[];
  expires_at: Date | null;
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
}

export async function insertToken(tx: Transaction<DB>, row: NewTokenRow): Promise<void> {
  await tx.insertInto('tokens').values(row).execute();
}

/** What authentication needs of a token and its agent, in one query. */
export interface TokenGrant {
  token_id: string;
  machine: string;
  token_scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  agent_id: string;
  agent_name: string;
  agent_kind: 'human' | 'agent';
  agent_scopes: string[];
  tool_allowlist: string[] | null;
  disabled: boolean;
}

export async function findGrantByHash(db: Kysely<DB>, hash: Uint8Array): Promise<TokenGrant | undefined> {
  return db
    .selectFrom('tokens')
    .innerJoin('agents', 'agents.id', 'tokens.agent_id')
    .select([
      'tokens.id as token_id',
      'tokens.machine',
      'tokens.scopes as token_scopes',
      'tokens.expires_at',
      'tokens.revoked_at',
      'agents.id as agent_id',
      'agents.name as agent_name',
      'agents.kind as agent_kind',
      'agents.scopes as agent_scopes',
      'agents.tool_allowlist',
      'agents.disabled',
    ])
    .where('tokens.token_hash', '=', hash)
    .executeTakeFirst();
}

/** Records use at most once a minute per token, so reads stay cheap. */
export async function touchToken(db: Kysely<DB>, tokenId: string, now: Date): Promise<void> {
  const minuteAgo = new Date(now.getTime() - 60_000);
  await db
    .updateTable('tokens')
    .set({ last_used_at: now })
    .where('id', '=', tokenId)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', minuteAgo)]))
    .execute();
}
