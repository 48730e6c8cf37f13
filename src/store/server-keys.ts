import type { Kysely } from 'kysely';
import type { DB } from './schema.ts';

/** The key that signs list cursors, made once by migrations/0080_cursor_key.sql and shared by every instance. */
export async function readCursorKey(db: Kysely<DB>): Promise<Uint8Array> {
  const row = await db.selectFrom('server_keys').select('key').where('purpose', '=', 'cursors').executeTakeFirst();
  if (!row) throw new Error('server_keys holds no cursors key: the database was not migrated');
  return new Uint8Array(row.key);
}
