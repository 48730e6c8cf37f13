import { type Kysely, type Selectable, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { AskAnswer, AskOption, AsksTable, DB } from './schema.ts';
import { workspacesWith } from './workspace-scope.ts';

export type AskRow = Selectable<AsksTable>;

type Role = NonNullable<AskRow['to_role']>;

/** Who an ask is put to: one principal, or every enabled human holding a role. */
export type AskAddressee = { id: string; role?: undefined } | { id?: undefined; role: Role };

export interface NewAskRow {
  id: string;
  task_id: string;
  question: string;
  options: AskOption[];
  to_id: string | null;
  to_role: Role | null;
  chain: string[];
  timeout_s: number;
  due_at: Date;
  default_answer: AskAnswer;
  asked_by_id: string;
  asked_by_kind: 'human' | 'agent';
  created_at: Date;
}

export async function insertAsk(tx: Tx, row: NewAskRow): Promise<AskRow> {
  return tx
    .insertInto('asks')
    .values({ ...row, options: JSON.stringify(row.options) as unknown as AskOption[], default_answer: JSON.stringify(row.default_answer) as unknown as AskAnswer })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findAsk(db: Kysely<DB>, id: string): Promise<AskRow | undefined> {
  return db.selectFrom('asks').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locks an ask's row until the transaction ends: answers, cancels and the deadline sweep take it. */
export async function lockAsk(tx: Tx, id: string): Promise<AskRow | undefined> {
  return tx.selectFrom('asks').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface AskListQuery {
  taskId: string | undefined;
  /** Asks put now to this principal or (either) this role. */
  to: { id?: string | undefined; role?: Role | undefined } | undefined;
  askedById: string | undefined;
  statuses: readonly AskRow['status'][] | undefined;
  /** Newest first, below this id. */
  beforeId: string | undefined;
  limit: number;
}

/** One page of asks, newest first; `limit + 1` rows for has_more. */
export async function listAsks(db: Kysely<DB>, q: AskListQuery): Promise<AskRow[]> {
  let query = db.selectFrom('asks').selectAll();
  if (q.taskId) query = query.where('task_id', '=', q.taskId);
  const to = q.to;
  if (to?.id !== undefined || to?.role !== undefined) {
    query = query.where((eb) => eb.or([...(to.id !== undefined ? [eb('to_id', '=', to.id)] : []), ...(to.role !== undefined ? [eb('to_role', '=', to.role)] : [])]));
  }
  if (q.askedById) query = query.where('asked_by_id', '=', q.askedById);
  if (q.statuses) query = query.where('status', 'in', [...q.statuses]);
  if (q.beforeId) query = query.where('id', '<', q.beforeId);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}

/** How many asks are open on each task, for the tasks that have any. */
export async function openAskCounts(db: Kysely<DB>, taskIds: readonly string[]): Promise<Map<string, number>> {
  if (taskIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('asks')
    .select(['task_id', db.fn.countAll<string>().as('n')])
    .where('status', '=', 'open')
    .where('task_id', 'in', [...taskIds])
    .groupBy('task_id')
    .execute();
  return new Map(rows.map((r) => [r.task_id, Number(r.n)]));
}

/** The asks of each task answered (or defaulted) most recently, newest first, at most `limit` each. */
export async function settledAsks(db: Kysely<DB>, taskIds: readonly string[], limit: number): Promise<Map<string, AskRow[]>> {
  const byTask = new Map<string, AskRow[]>();
  if (taskIds.length === 0) return byTask;
  const rows = await db
    .selectFrom('asks')
    .selectAll()
    .where('task_id', 'in', [...taskIds])
    .where('status', 'in', ['answered', 'defaulted'])
    .orderBy('answered_at', 'desc')
    .execute();
  for (const row of rows) {
    const list = byTask.get(row.task_id) ?? [];
    if (list.length < limit) list.push(row);
    byTask.set(row.task_id, list);
  }
  return byTask;
}

export interface AskSettlement {
  status: 'answered' | 'defaulted' | 'cancelled';
  answer: AskAnswer | null;
  answered_by_id: string | null;
  answered_by_kind: 'human' | 'agent' | 'system' | null;
  answered_at: Date;
}

/** Closes a locked open ask. */
export async function settleAsk(tx: Tx, id: string, s: AskSettlement): Promise<AskRow> {
  return tx
    .updateTable('asks')
    .set({ ...s, answer: s.answer === null ? null : (JSON.stringify(s.answer) as unknown as AskAnswer) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Hands a locked open ask to its next addressee with a new deadline. */
export async function escalateAsk(tx: Tx, id: string, to: AskAddressee, dueAt: Date): Promise<AskRow> {
  return tx
    .updateTable('asks')
    .set((eb) => ({ to_id: to.id ?? null, to_role: to.role ?? null, due_at: dueAt, step: eb('step', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Open asks past their deadline, locked, skipping those another instance holds (the sweep's work). */
export async function lockDueAsks(tx: Tx, now: Date, limit: number): Promise<AskRow[]> {
  return tx
    .selectFrom('asks')
    .selectAll()
    .where('status', '=', 'open')
    .where('due_at', '<=', now)
    .orderBy('due_at')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute();
}

/** Every open ask of a task, locked (a cancelled or deleted task closes them). */
export async function lockOpenAsksOfTask(tx: Tx, taskId: string): Promise<AskRow[]> {
  return tx.selectFrom('asks').selectAll().where('task_id', '=', taskId).where('status', '=', 'open').orderBy('id').forUpdate().execute();
}

/** Counts asks opened (+1) or closed (-1) on a task; not a change of the task itself (no version bump). */
export async function adjustOpenAsks(tx: Tx, taskId: string, delta: number): Promise<void> {
  await tx
    .updateTable('tasks')
    .set((eb) => ({ open_asks: eb('open_asks', '+', delta) }))
    .where('id', '=', taskId)
    .execute();
}

/** Locks a task's row whatever its state: asks take the task first, then the ask, as every task write does. */
export async function lockAskTask(tx: Tx, taskId: string): Promise<void> {
  await tx.selectFrom('tasks').select('id').where('id', '=', taskId).forUpdate().execute();
}

/** Open asks past their deadline (of `asks`). */
const askDue = (now: Date) => sql<boolean>`status = 'open' AND due_at <= ${now}`;

/** The first `limit` open asks past their deadline, soonest due first. */
export async function dueAsks(tx: Tx, now: Date, limit: number): Promise<{ id: string; task_id: string }[]> {
  return tx.selectFrom('asks').select(['id', 'task_id']).where(askDue(now)).orderBy('due_at').limit(limit).execute();
}

/** The workspaces with an ask past its deadline: the deadline pass visits only those. */
export function workspacesWithAsksDue(db: Kysely<DB>, now: Date): Promise<string[]> {
  return workspacesWith(db, [{ from: 'asks', where: askDue(now) }]);
}
