import { type Insertable, type Kysely, type Selectable, sql, type Updateable } from 'kysely';
import { FINISHED_STATUSES } from '../domain/task-status.ts';
import type { DB, SchedulesTable } from './schema.ts';
import type { Tx } from './connection.ts';
import { workspacesWith } from './workspace-scope.ts';

export type ScheduleRow = Selectable<SchedulesTable>;

export async function insertSchedule(tx: Tx, row: Insertable<SchedulesTable>): Promise<ScheduleRow> {
  return tx.insertInto('schedules').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A schedule that is not deleted. */
export async function findSchedule(db: Kysely<DB>, id: string): Promise<ScheduleRow | undefined> {
  return db.selectFrom('schedules').selectAll().where('id', '=', id).where('deleted_at', 'is', null).executeTakeFirst();
}

export async function lockSchedule(tx: Tx, id: string): Promise<ScheduleRow | undefined> {
  return tx.selectFrom('schedules').selectAll().where('id', '=', id).where('deleted_at', 'is', null).forUpdate().executeTakeFirst();
}

/** Applies changes and bumps the version. */
export async function updateSchedule(tx: Tx, id: string, changes: Updateable<SchedulesTable>): Promise<ScheduleRow> {
  return tx.updateTable('schedules').set({ ...changes, version: sql`version + 1` }).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

/** One page of live schedules by id; fetches `limit + 1` for `has_more`. */
export async function listSchedules(db: Kysely<DB>, q: { afterId: string | undefined; limit: number }): Promise<ScheduleRow[]> {
  let query = db.selectFrom('schedules').selectAll().where('deleted_at', 'is', null);
  if (q.afterId) query = query.where('id', '>', q.afterId);
  return query.orderBy('id').limit(q.limit + 1).execute();
}

/** Live schedules with an occurrence due, or one held for the last task to close (of `schedules`). */
const scheduleDue = (now: Date) => sql<boolean>`enabled AND deleted_at IS NULL AND (next_run_at <= ${now} OR held_at IS NOT NULL)`;

/** The workspaces with a schedule due: the schedule pass visits only those. */
export function workspacesWithSchedulesDue(db: Kysely<DB>, now: Date): Promise<string[]> {
  return workspacesWith(db, [{ from: 'schedules', where: scheduleDue(now) }]);
}

/** Enabled schedules with an occurrence due at `now` (or one held back), oldest due first. */
export async function dueSchedules(db: Kysely<DB>, now: Date, limit: number): Promise<ScheduleRow[]> {
  return db
    .selectFrom('schedules')
    .selectAll()
    .where(scheduleDue(now))
    .orderBy('next_run_at')
    .limit(limit)
    .execute();
}

/**
 * Moves a schedule past the occurrences one pass handled, only if no one else did meanwhile (its
 * `next_run_at` and `held_at` are still what the pass read). Returns whether this pass won.
 */
export async function advanceSchedule(
  db: Kysely<DB>,
  read: Pick<ScheduleRow, 'id' | 'next_run_at' | 'held_at'>,
  changes: Pick<Updateable<SchedulesTable>, 'next_run_at' | 'held_at' | 'last_run_at' | 'last_task_id'>,
): Promise<boolean> {
  const sameTime = (column: 'next_run_at' | 'held_at', value: Date | null) => (value === null ? sql<boolean>`${sql.ref(column)} IS NULL` : sql<boolean>`${sql.ref(column)} = ${value}`);
  const result = await db
    .updateTable('schedules')
    .set(changes)
    .where('id', '=', read.id)
    .where(sameTime('next_run_at', read.next_run_at))
    .where(sameTime('held_at', read.held_at))
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

/** Whether a task is still open (not done, cancelled or deleted). */
export async function taskOpen(db: Kysely<DB>, id: string): Promise<boolean> {
  const row = await db.selectFrom('tasks').select('id').where('id', '=', id).where('deleted_at', 'is', null).where('status', 'not in', FINISHED_STATUSES).executeTakeFirst();
  return row !== undefined;
}
