/** One workspace's rows, read as the tables' owner (across workspaces), for assertions about them. */
import { type Kysely, sql } from 'kysely';
import { ID_PREFIXES, ULID } from '../../src/ids.ts';
import type { DB } from '../../src/store/schema.ts';

const ID = new RegExp(`\\b(?:${ID_PREFIXES.join('|')})_${ULID}\\b`, 'g');

/** Every id in `text`. */
export function idsInText(text: string): string[] {
  return text.match(ID) ?? [];
}

/** The tables whose rows belong to a workspace (row-level security keeps them apart). */
async function workspaceTables(db: Kysely<DB>): Promise<string[]> {
  const { rows } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.columns
    WHERE column_name = 'workspace_id' AND table_schema = current_schema() ORDER BY table_name`.execute(db);
  return rows.map((r) => r.table_name);
}

/** Each of the workspace's tables as one checksum of its rows (read as the owner, across workspaces). */
export async function rowsOf(db: Kysely<DB>, workspace: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const table of await workspaceTables(db)) {
    // A token's last use moves whenever its holder calls; A does not call during the probe, but its reads after it do.
    const row = table === 'tokens' ? sql`to_jsonb(x) - 'last_used_at'` : sql`to_jsonb(x)`;
    const { rows } = await sql<{ sum: string }>`
      SELECT md5(coalesce(string_agg((${row})::text, '|' ORDER BY (${row})::text), '')) AS sum
      FROM ${sql.table(table)} x WHERE x.workspace_id = ${workspace}`.execute(db);
    out[table] = rows[0]?.sum ?? '';
  }
  return out;
}

/** Every id written anywhere in the workspace's rows. */
export async function idsIn(db: Kysely<DB>, workspace: string): Promise<Set<string>> {
  const found = new Set<string>();
  for (const table of await workspaceTables(db)) {
    const { rows } = await sql<{ text: string | null }>`SELECT string_agg(to_jsonb(x)::text, '|') AS text FROM ${sql.table(table)} x WHERE x.workspace_id = ${workspace}`.execute(db);
    for (const id of idsInText(rows[0]?.text ?? '')) found.add(id);
  }
  return found;
}

/** The ids of the workspace's own rows. */
export async function ownIds(db: Kysely<DB>, workspace: string): Promise<Set<string>> {
  const found = new Set<string>();
  for (const table of await workspaceTables(db)) {
    const { rows } = await sql<{ id: string | null }>`SELECT to_jsonb(x)->>'id' AS id FROM ${sql.table(table)} x WHERE x.workspace_id = ${workspace}`.execute(db);
    for (const { id } of rows) if (id) found.add(id);
  }
  return found;
}
