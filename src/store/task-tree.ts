import { sql, type Kysely } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB } from './schema.ts';
import { TASK_COLUMNS, type TaskRow } from './tasks.ts';
import { workspacesWith } from './workspace-scope.ts';

/** Walks stop here: deeper than any legal tree, so a walk of a legal tree is never cut short. */
const WALK_LIMIT = 64;

/**
 * Serializes changes of `parent_id` for the rest of the transaction: two concurrent moves (A under B,
 * B under A) each check the other's ancestors before the other commits, so they take turns.
 */
export async function lockTaskTree(tx: Tx): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(25, 5)`.execute(tx);
}

/**
 * Before a task is closed (done): the tree lock, if the task has live subtasks. Closing locks the
 * open subtasks after the task, so two closes in one tree (or a close and a move) must take turns
 * or they could lock the same rows in opposite orders. A leaf's close locks only its own row and
 * takes no tree lock, so approvals of leaves never queue on each other. A subtask added after this
 * check is still found by the close (its insert waits on the task's row lock, or the close reads
 * it); at worst two closes then deadlock, and the database breaks one off, which the service runs
 * again (src/service/execute.ts), this time with the lock.
 */
export async function lockTaskTreeForClose(tx: Tx, id: string): Promise<void> {
  const { rows } = await sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM tasks WHERE parent_id = ${id} AND deleted_at IS NULL) AS found`.execute(tx);
  if (rows[0]?.found) await lockTaskTree(tx);
}

/** The task and its ancestors, nearest first (the task itself first), live or deleted. */
export async function ancestorIds(db: Kysely<DB>, id: string): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    WITH RECURSIVE up (id, parent_id, depth) AS (
      SELECT id, parent_id, 1 FROM tasks WHERE id = ${id}
      UNION ALL
      SELECT t.id, t.parent_id, up.depth + 1 FROM tasks t JOIN up ON t.id = up.parent_id WHERE up.depth < ${WALK_LIMIT}
    )
    SELECT id FROM up ORDER BY depth`.execute(db);
  return rows.map((r) => r.id);
}

/** How many live subtasks the task has (direct children only). */
export async function childCount(db: Kysely<DB>, id: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM tasks WHERE parent_id = ${id} AND deleted_at IS NULL`.execute(db);
  return Number(rows[0]?.n ?? 0);
}

/** How many levels of live descendants hang below the task: 0 when it has no children. */
export async function subtreeHeight(db: Kysely<DB>, id: string): Promise<number> {
  const { rows } = await sql<{ height: number }>`
    WITH RECURSIVE down (id, depth) AS (
      SELECT id, 1 FROM tasks WHERE parent_id = ${id} AND deleted_at IS NULL
      UNION ALL
      SELECT t.id, down.depth + 1 FROM tasks t JOIN down ON t.parent_id = down.id WHERE t.deleted_at IS NULL AND down.depth < ${WALK_LIMIT}
    )
    SELECT COALESCE(max(depth), 0)::int AS height FROM down`.execute(db);
  return Number(rows[0]?.height ?? 0);
}

/**
 * The live descendants of a task that are not done or cancelled, at any depth, locked (in id order,
 * so two callers cannot deadlock), nearest level first. Closed tasks are walked through: a done
 * child reopened later can leave open grandchildren.
 */
export async function lockOpenDescendants(tx: Tx, id: string): Promise<TaskRow[]> {
  const { rows: found } = await sql<{ id: string }>`
    WITH RECURSIVE down (id, status, depth) AS (
      SELECT id, status, 1 FROM tasks WHERE parent_id = ${id} AND deleted_at IS NULL
      UNION ALL
      SELECT t.id, t.status, down.depth + 1 FROM tasks t JOIN down ON t.parent_id = down.id WHERE t.deleted_at IS NULL AND down.depth < ${WALK_LIMIT}
    )
    SELECT id FROM down WHERE status NOT IN ('done', 'cancelled') ORDER BY id`.execute(tx);
  if (found.length === 0) return [];
  const { rows } = await sql<TaskRow>`SELECT ${sql.raw(TASK_COLUMNS)} FROM tasks WHERE id = ANY (${found.map((r) => r.id)}::text[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`.execute(tx);
  // Recheck under the lock: a child closed meanwhile is no longer open.
  return rows.filter((r) => r.status !== 'done' && r.status !== 'cancelled');
}

export interface Overdue {
  id: string;
  due_at: Date;
}

/** Open tasks past their due date and not yet marked overdue (of `tasks`). */
const overdueBy = (now: Date) => sql<boolean>`due_at IS NOT NULL AND overdue_at IS NULL AND due_at <= ${now} AND deleted_at IS NULL AND status NOT IN ('done', 'cancelled')`;

/** The workspaces with a task to mark overdue now: the overdue pass visits only those. */
export function workspacesWithOverdue(db: Kysely<DB>, now: Date): Promise<string[]> {
  return workspacesWith(db, [{ from: 'tasks', where: overdueBy(now) }]);
}

/**
 * Marks up to `limit` open tasks past their due date as notified and returns them: each due date
 * gets one `task.overdue` event, written by whichever instance marks the row first. SKIP LOCKED:
 * several instances sweep at once without taking the same task or waiting on a writer.
 */
export async function markOverdue(tx: Tx, now: Date, limit: number): Promise<Overdue[]> {
  const { rows } = await sql<Overdue>`
    WITH due AS (
      SELECT id FROM tasks
      WHERE ${overdueBy(now)}
      ORDER BY due_at LIMIT ${limit}
      FOR UPDATE SKIP LOCKED
    )
    UPDATE tasks SET overdue_at = ${now} FROM due WHERE tasks.id = due.id
    RETURNING tasks.id, tasks.due_at`.execute(tx);
  return rows;
}
