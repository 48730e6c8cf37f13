import { type Kysely, type Selectable, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { CommentsTable, DB } from './schema.ts';

export type CommentRow = Selectable<CommentsTable>;

export interface NewCommentRow {
  id: string;
  task_id: string;
  body: string;
  artifacts: string[];
  mentions: string[];
  author_id: string;
  author_kind: 'human' | 'agent';
  created_at: Date;
}

export async function insertComment(tx: Tx, row: NewCommentRow): Promise<CommentRow> {
  return tx
    .insertInto('comments')
    .values({ ...row, updated_at: row.created_at, deleted_at: null, deleted_by_id: null })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A comment, deleted ones included (their tombstone stays readable). */
export async function findComment(db: Kysely<DB>, id: string): Promise<CommentRow | undefined> {
  return db.selectFrom('comments').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Several comments by id, in no set order. */
export async function findComments(db: Kysely<DB>, ids: readonly string[]): Promise<CommentRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('comments').selectAll().where('id', 'in', [...ids]).execute();
}

/** Locks a comment's row until the transaction ends. */
export async function lockComment(tx: Tx, id: string): Promise<CommentRow | undefined> {
  return tx.selectFrom('comments').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface CommentChanges {
  body: string;
  artifacts?: string[];
  mentions?: string[];
  updated_at: Date;
  deleted_at?: Date;
  deleted_by_id?: string;
}

/** Applies changes to a locked comment and bumps its version. */
export async function updateComment(tx: Tx, id: string, changes: CommentChanges): Promise<CommentRow> {
  return tx
    .updateTable('comments')
    .set({ ...changes, version: sql<number>`version + 1` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface CommentListQuery {
  taskId: string;
  /** Keyset position: ids strictly above this one (oldest first). */
  afterId: string | undefined;
  /** Only comments with an event after this sequence number (the `since` delta), tombstones included. */
  changedAfterSeq: string | undefined;
  limit: number;
}

/** One page of a task's thread, oldest first, tombstones in place. Fetches `limit + 1` rows for has_more. */
export async function listComments(db: Kysely<DB>, q: CommentListQuery): Promise<CommentRow[]> {
  let query = db.selectFrom('comments').selectAll().where('task_id', '=', q.taskId);
  if (q.afterId !== undefined) query = query.where('id', '>', q.afterId);
  if (q.changedAfterSeq !== undefined) {
    const seq = q.changedAfterSeq;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('events')
          .select(sql`1`.as('one'))
          // Comment events have the task as subject (so they are in its timeline) and name the comment in data.
          .whereRef('events.subject', '=', 'comments.task_id')
          .where('events.seq', '>', seq)
          .where(sql<boolean>`events.data->>'comment_id' = comments.id`),
      ),
    );
  }
  return query.orderBy('id', 'asc').limit(q.limit + 1).execute();
}

/** The humans with a live comment on a task, but those in `except`: whom a new comment there answers. */
export async function humanCommenters(tx: Tx, taskId: string, except: readonly string[]): Promise<string[]> {
  const rows = await tx
    .selectFrom('comments')
    .select('author_id')
    .distinct()
    .where('task_id', '=', taskId)
    .where('author_kind', '=', 'human')
    .where('deleted_at', 'is', null)
    .$if(except.length > 0, (qb) => qb.where('author_id', 'not in', [...except]))
    .orderBy('author_id')
    .execute();
  return rows.map((r) => r.author_id);
}

/** The latest `perTask` live comments by humans on each task, newest first, in one statement. */
export async function latestHumanComments(db: Kysely<DB>, taskIds: readonly string[], perTask: number): Promise<Map<string, CommentRow[]>> {
  const byTask = new Map<string, CommentRow[]>(taskIds.map((id) => [id, []]));
  if (taskIds.length === 0) return byTask;
  const rows = await db
    .selectFrom((eb) =>
      eb
        .selectFrom('comments')
        .selectAll()
        .select(sql<number>`row_number() OVER (PARTITION BY task_id ORDER BY id DESC)`.as('rank'))
        .where('task_id', 'in', [...taskIds])
        .where('author_kind', '=', 'human')
        .where('deleted_at', 'is', null)
        .as('ranked'),
    )
    .selectAll()
    .where('rank', '<=', perTask)
    .orderBy('id', 'desc')
    .execute();
  for (const { rank: _rank, ...row } of rows) byTask.get(row.task_id)?.push(row);
  return byTask;
}
