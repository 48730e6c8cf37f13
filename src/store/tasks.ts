import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { DB, TasksTable } from './schema.ts';

export type TaskRow = Selectable<TasksTable>;

export interface NewTaskRow {
  id: string;
  title: string;
  description: string;
  status: string;
  priority: number;
  labels: string[];
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
}

export async function insertTask(tx: Transaction<DB>, row: NewTaskRow): Promise<TaskRow> {
  return tx
    .insertInto('tasks')
    .values({ ...row, updated_at: row.created_at, updated_by_id: row.created_by_id, updated_by_kind: row.created_by_kind })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findTask(db: Kysely<DB>, id: string): Promise<TaskRow | undefined> {
  return db.selectFrom('tasks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Reads a task and locks its row until the transaction ends. */
export async function lockTask(tx: Transaction<DB>, id: string): Promise<TaskRow | undefined> {
  return tx.selectFrom('tasks').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface TaskChanges {
  title?: string;
  description?: string;
  status?: string;
  priority?: number;
  labels?: string[];
}

/** Applies changes to a locked task and bumps its version. */
export async function updateTask(
  tx: Transaction<DB>,
  id: string,
  changes: TaskChanges & { updated_at: Date; updated_by_id: string; updated_by_kind: string },
): Promise<TaskRow> {
  return tx
    .updateTable('tasks')
    .set({ ...changes, version: sql<number>`version + 1` })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export interface TaskListQuery {
  statuses: string[] | undefined;
  labels: string[] | undefined;
  /** Only tasks with an event after this sequence number (the `since` delta). */
  changedAfterSeq: string | undefined;
  /** Keyset position: ids strictly below this one (newest first). */
  beforeId: string | undefined;
  limit: number;
}

/** One page of tasks, newest first. Fetches `limit + 1` rows so the caller can tell `has_more`. */
export async function listTasks(db: Kysely<DB>, q: TaskListQuery): Promise<TaskRow[]> {
  let query = db.selectFrom('tasks').selectAll();
  if (q.statuses) query = query.where('status', 'in', q.statuses);
  if (q.labels) query = query.where('labels', '@>', sql<string[]>`${q.labels}::text[]`);
  if (q.beforeId) query = query.where('id', '<', q.beforeId);
  if (q.changedAfterSeq !== undefined) {
    const seq = q.changedAfterSeq;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('events')
          .select(sql`1`.as('one'))
          .whereRef('events.subject', '=', 'tasks.id')
          .where('events.seq', '>', seq),
      ),
    );
  }
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}
