import { sql, type Kysely, type Selectable } from 'kysely';
import type { AgentsTable, DB } from './schema.ts';
import type { Tx } from './connection.ts';

export type AgentRow = Selectable<AgentsTable>;

export interface NewAgentRow {
  id: string;
  name: string;
  kind: 'human' | 'agent';
  scopes: string[];
  tool_allowlist: string[] | null;
  rate_limit?: number | null;
  external_id?: string | null;
  external_updated_at?: Date | null;
  disabled?: boolean;
  email?: string | null;
  role?: 'owner' | 'admin' | 'member' | 'viewer' | null;
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
}

export async function insertAgent(tx: Tx, row: NewAgentRow): Promise<AgentRow> {
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

export async function findAgent(db: Kysely<DB>, id: string): Promise<AgentRow | undefined> {
  return db.selectFrom('agents').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function lockAgent(tx: Tx, id: string): Promise<AgentRow | undefined> {
  return tx.selectFrom('agents').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/**
 * The enabled humans holding `scope`, but `exceptId`, in id order: whom a request waits on, e.g.
 * an approval (`approvals:decide`, not its requester, who may not decide their own) or a budget
 * (`agents:admin`, who may raise it).
 */
export async function humansWithScope(db: Kysely<DB>, scope: string, exceptId?: string): Promise<string[]> {
  const rows = await db
    .selectFrom('agents')
    .select('id')
    // Literal, not parameters: a prepared statement's generic plan can then use the partial index
    // agents_humans (migration 0333), which a fleet of agents stays out of.
    .where(sql<boolean>`kind = 'human' AND NOT disabled`)
    .$if(exceptId !== undefined, (qb) => qb.where('id', '<>', exceptId ?? ''))
    .where(sql<boolean>`${scope} = ANY(scopes)`)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}

/** One page of principals, newest first; `limit + 1` rows for has_more. */
export async function listAgents(db: Kysely<DB>, q: { kind: 'human' | 'agent' | undefined; beforeId: string | undefined; limit: number }): Promise<AgentRow[]> {
  return db
    .selectFrom('agents')
    .selectAll()
    .$if(q.kind !== undefined, (qb) => qb.where('kind', '=', q.kind ?? 'agent'))
    .$if(q.beforeId !== undefined, (qb) => qb.where('id', '<', q.beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
}

export interface AgentChanges {
  name?: string;
  scopes?: string[];
  tool_allowlist?: string[] | null;
  disabled?: boolean;
  rate_limit?: number | null;
  email?: string | null;
  external_updated_at?: Date | null;
  role?: 'owner' | 'admin' | 'member' | 'viewer' | null;
}

export async function updateAgent(
  tx: Tx,
  id: string,
  changes: AgentChanges & { updated_at: Date; updated_by_id: string; updated_by_kind: string },
): Promise<AgentRow> {
  return tx
    .updateTable('agents')
    .set({ ...changes, version: sql<number>`version + 1` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Inserts the human the auth provider knows by `row.external_id` unless one exists; then answers
 * undefined. A concurrent insert for the same user waits for the first to commit and inserts nothing.
 */
export async function insertExternalHuman(tx: Tx, row: NewAgentRow & { external_id: string }): Promise<AgentRow | undefined> {
  return tx
    .insertInto('agents')
    .values({ ...row, updated_at: row.created_at, updated_by_id: row.created_by_id, updated_by_kind: row.created_by_kind })
    .onConflict((oc) => oc.column('external_id').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The human the auth provider knows by this user id, locked for the caller's transaction. */
export async function lockAgentByExternalId(tx: Tx, externalId: string): Promise<AgentRow | undefined> {
  return tx.selectFrom('agents').selectAll().where('external_id', '=', externalId).forUpdate().executeTakeFirst();
}

/**
 * The principals whose id is one of `ids` or whose name is spelled as one of `names` (any case, a
 * space and `_` alike, as a mention spells "Ada Lovelace": `@Ada_Lovelace`), to resolve mentions and
 * assignees: from the index of spellings (agents_spelling), not a scan of every principal.
 */
export async function findPrincipals(db: Kysely<DB>, q: { ids: readonly string[]; names: readonly string[] }): Promise<Pick<AgentRow, 'id' | 'name' | 'kind' | 'disabled'>[]> {
  if (q.ids.length === 0 && q.names.length === 0) return [];
  return db
    .selectFrom('agents')
    .select(['id', 'name', 'kind', 'disabled'])
    .where((eb) =>
      eb.or([
        ...(q.ids.length > 0 ? [eb('id', 'in', [...q.ids])] : []),
        ...(q.names.length > 0 ? [eb('spelling', 'in', q.names.map(spelling))] : []),
      ]),
    )
    .orderBy('id')
    .execute();
}

/** What the directory shows of a principal: nothing but how to name it. */
export type DirectoryRow = Pick<AgentRow, 'id' | 'name' | 'kind' | 'disabled'>;

/** `agents.spelling` (a name as a mention spells it: lowercased, each space `_`), of a text given here. */
function spelling(text: string) {
  return sql<string>`lower(replace(${text}, ' ', '_'))`;
}

/**
 * One page of the directory, newest first, `limit + 1` rows for has_more: the principals among `ids`
 * when given, and those whose name begins with `prefix` (as a mention spells both: any case, a
 * space and `_` alike).
 */
export async function listDirectory(
  db: Kysely<DB>,
  q: { ids: readonly string[] | undefined; prefix: string | undefined; kind: 'human' | 'agent' | undefined; beforeId: string | undefined; limit: number },
): Promise<DirectoryRow[]> {
  return db
    .selectFrom('agents')
    .select(['id', 'name', 'kind', 'disabled'])
    .$if(q.ids !== undefined, (qb) => qb.where('id', 'in', [...(q.ids ?? [])]))
    // Every spelling from the prefix's up to the prefix followed by the last code point (in byte order): those it begins.
    .$if(q.prefix !== undefined, (qb) => qb.where('spelling', '>=', spelling(q.prefix ?? '')).where('spelling', '<', sql<string>`${spelling(q.prefix ?? '')} || chr(1114111)`))
    .$if(q.kind !== undefined, (qb) => qb.where('kind', '=', q.kind ?? 'agent'))
    .$if(q.beforeId !== undefined, (qb) => qb.where('id', '<', q.beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
}

/** Of these mention spellings, those more than one principal answers to (a mention of them is ambiguous). */
export async function sharedSpellings(db: Kysely<DB>, spellings: readonly string[]): Promise<Set<string>> {
  if (spellings.length === 0) return new Set();
  const rows = await db
    .selectFrom('agents')
    .select('spelling')
    .where('spelling', 'in', [...spellings])
    .groupBy('spelling')
    .having((eb) => eb.fn.countAll(), '>', 1)
    .execute();
  return new Set(rows.map((r) => r.spelling));
}
