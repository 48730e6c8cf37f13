import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import type { DB, TemplatesTable } from './schema.ts';
import type { Tx } from './connection.ts';

export type TemplateRow = Selectable<TemplatesTable>;

export async function insertTemplate(tx: Tx, row: Insertable<TemplatesTable>): Promise<TemplateRow> {
  return tx.insertInto('templates').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A template that is not deleted. */
export async function findTemplate(db: Kysely<DB>, id: string): Promise<TemplateRow | undefined> {
  return db.selectFrom('templates').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function lockTemplate(tx: Tx, id: string): Promise<TemplateRow | undefined> {
  return tx.selectFrom('templates').selectAll().where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Applies changes and bumps the version. */
export async function updateTemplate(tx: Tx, id: string, changes: Updateable<TemplatesTable>): Promise<TemplateRow> {
  return tx.updateTable('templates').set({ ...changes, version: sql`version + 1` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** One page of live templates by id; fetches `limit + 1` for `has_more`. */
export async function listTemplates(db: Kysely<DB>, q: { afterId: string | undefined; limit: number }): Promise<TemplateRow[]> {
  let query = db.selectFrom('templates').selectAll().where('deleted_at', 'is', null);
  if (q.afterId) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit + 1).execute();
}
