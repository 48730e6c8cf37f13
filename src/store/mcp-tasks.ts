import type { Kysely, Selectable } from 'kysely';
import type { DB, McpTasksTable } from './schema.ts';

export type McpTaskRow = Selectable<McpTasksTable>;
export type NewMcpTaskRow = Pick<McpTaskRow, 'id' | 'principal_id' | 'tool' | 'input' | 'follows' | 'wait_until' | 'created_at' | 'expires_at'>;
/** How a task ended: its status and what it ended with (the tool's result, or the JSON-RPC error). */
export interface McpTaskEnd {
  readonly status: 'completed' | 'failed' | 'cancelled';
  readonly result: Record<string, unknown> | null;
}

export async function insertMcpTask(db: Kysely<DB>, row: NewMcpTaskRow): Promise<McpTaskRow> {
  return db
    .insertInto('mcp_tasks')
    .values({ ...row, input: JSON.stringify(row.input), updated_at: row.created_at })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** The principal's task `id`, unless it has expired (another's is as absent as an unknown one). */
export async function findMcpTask(db: Kysely<DB>, id: string, principalId: string, now: Date): Promise<McpTaskRow | undefined> {
  return db.selectFrom('mcp_tasks').selectAll().where('id', '=', id).where('principal_id', '=', principalId).where('expires_at', '>', now).executeTakeFirst();
}

/**
 * Ends the principal's working task; a task that has already ended stays as it ended (two polls
 * that settle it at once, or a cancel racing the answer: the first one wins). Returns the task as
 * it now stands, or undefined when it is unknown, another's, or expired.
 */
export async function endMcpTask(db: Kysely<DB>, id: string, principalId: string, end: McpTaskEnd, now: Date): Promise<McpTaskRow | undefined> {
  const ended = await db
    .updateTable('mcp_tasks')
    .set({ status: end.status, result: end.result === null ? null : JSON.stringify(end.result), updated_at: now })
    .where('id', '=', id)
    .where('principal_id', '=', principalId)
    .where('expires_at', '>', now)
    .where('status', '=', 'working')
    .returningAll()
    .executeTakeFirst();
  return ended ?? findMcpTask(db, id, principalId, now);
}
