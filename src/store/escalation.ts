import { type Kysely, sql } from 'kysely';
import type { Tx } from './connection.ts';
import type { DB } from './schema.ts';
import { workspacesWith } from './workspace-scope.ts';

/** One wait the escalation pass just marked overdue. */
export interface Overdue {
  /** The ask, approval or task. */
  id: string;
  /** Its task: the ask's, the approval's target when that is a task, the task in review. */
  task_id: string | null;
  /** Who waits: the asker, the requester, who handed the work in. */
  by_id: string;
  /** Who the wait is on so far (an ask's addressees); they are not notified again. */
  on: string[];
  excerpt: string;
  since: Date;
}

/** Since when a task in review has waited: its latest hand-in. */
const reviewSince = sql`coalesce((tasks.handoff->>'at')::timestamptz, tasks.updated_at)`;

/** What waits since before `before` and is not marked overdue yet, by kind: open asks, pending approvals, tasks in review. */
const WAITING = {
  ask: (q: { before: Date }) => sql<boolean>`status = 'open' AND overdue_at IS NULL AND created_at <= ${q.before}`,
  approval: (q: { before: Date; now: Date }) => sql<boolean>`status = 'pending' AND overdue_at IS NULL AND created_at <= ${q.before} AND expires_at > ${q.now}`,
  review: (q: { before: Date }) => sql<boolean>`status = 'in_review' AND deleted_at IS NULL AND ${reviewSince} <= ${q.before} AND (review_overdue_at IS NULL OR review_overdue_at < ${reviewSince})`,
} as const;

const WAITING_IN = { ask: 'asks', approval: 'approvals', review: 'tasks' } as const;

/**
 * Which of `among` (the workspaces with an SLA for `kind`) have something of it waiting since before
 * `before` and not marked: the escalation pass visits only those (with the shortest SLA of them, then
 * each its own). Naming the workspaces keeps the tasks in review to the (workspace, status) index.
 */
export function workspacesWithWaits(db: Kysely<DB>, kind: keyof typeof WAITING, q: { among: readonly string[]; before: Date; now: Date }): Promise<string[]> {
  return workspacesWith(db, [{ from: WAITING_IN[kind], where: sql<boolean>`workspace_id = ANY(${[...q.among]}::text[]) AND ${WAITING[kind](q)}` }]);
}

/**
 * Marks up to `limit` open asks made before `before` overdue and returns them. SKIP LOCKED, and the
 * UPDATE re-checks the row it locked: an ask that another instance marked, or that closed meanwhile,
 * is left out, so each ask is marked once across instances.
 */
export async function markOverdueAsks(tx: Tx, q: { before: Date; now: Date; limit: number }): Promise<Overdue[]> {
  const { rows } = await sql<Overdue>`
    WITH due AS (
      SELECT id FROM asks WHERE ${WAITING.ask(q)}
      ORDER BY created_at LIMIT ${q.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE asks SET overdue_at = ${q.now} FROM due
    WHERE asks.id = due.id AND asks.status = 'open' AND asks.overdue_at IS NULL
    RETURNING asks.id, asks.task_id, asks.asked_by_id AS by_id, asks.chain[1:asks.step + 1] AS on,
              left(asks.question, 200) AS excerpt, asks.created_at AS since`.execute(tx);
  return rows;
}

/** As `markOverdueAsks`, for pending, unexpired approvals requested before `before`. */
export async function markOverdueApprovals(tx: Tx, q: { before: Date; now: Date; limit: number }): Promise<Overdue[]> {
  const { rows } = await sql<Overdue>`
    WITH due AS (
      SELECT id FROM approvals WHERE ${WAITING.approval(q)}
      ORDER BY created_at LIMIT ${q.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE approvals SET overdue_at = ${q.now} FROM due
    WHERE approvals.id = due.id AND approvals.status = 'pending' AND approvals.overdue_at IS NULL
    RETURNING approvals.id, CASE WHEN approvals.target_id LIKE 'tsk\\_%' THEN approvals.target_id END AS task_id,
              approvals.requested_by_id AS by_id, ARRAY[]::text[] AS on, 'Approve ' || approvals.operation || '?' AS excerpt, approvals.created_at AS since`.execute(tx);
  return rows;
}

/**
 * As `markOverdueAsks`, for tasks handed in for review before `before` and not marked since that
 * hand-in (a task handed in again waits anew). Not a change of the task: no new version.
 */
export async function markOverdueReviews(tx: Tx, q: { before: Date; now: Date; limit: number }): Promise<Overdue[]> {
  const { rows } = await sql<Overdue>`
    WITH due AS (
      SELECT id FROM tasks WHERE ${WAITING.review(q)}
      ORDER BY updated_at LIMIT ${q.limit} FOR UPDATE SKIP LOCKED
    )
    UPDATE tasks SET review_overdue_at = ${q.now} FROM due
    WHERE tasks.id = due.id AND tasks.status = 'in_review' AND (tasks.review_overdue_at IS NULL OR tasks.review_overdue_at < ${reviewSince})
    RETURNING tasks.id, tasks.id AS task_id, coalesce(tasks.handoff->'by'->>'id', tasks.updated_by_id) AS by_id, ARRAY[]::text[] AS on,
              'Review ' || left(tasks.title, 190) AS excerpt, ${reviewSince} AS since`.execute(tx);
  return rows;
}

/** Counts overdue asks on their tasks (the board shows them), in the pass's transaction. */
export async function adjustOverdueAsks(tx: Tx, taskId: string, delta: number): Promise<void> {
  await tx
    .updateTable('tasks')
    .set((eb) => ({ overdue_asks: sql<number>`greatest(0, ${eb.ref('overdue_asks')} + ${delta})` }))
    .where('id', '=', taskId)
    .execute();
}

/** Marks the open inbox items about an ask or approval overdue (its addressees' or deciders'); returns whose they are. */
export async function markInboxOverdue(tx: Tx, refId: string, kind: 'ask' | 'approval', now: Date): Promise<string[]> {
  const rows = await tx.updateTable('inbox_items').set({ overdue_at: now }).where('ref_id', '=', refId).where('kind', '=', kind).where('state', '<>', 'done').returning('principal_id').execute();
  return rows.map((r) => r.principal_id);
}

/** The roles some enabled human holds (an ask to any other would wait on nobody). */
export async function heldRoles(db: Kysely<DB>): Promise<string[]> {
  const rows = await db.selectFrom('agents').select('role').distinct().where('kind', '=', 'human').where('disabled', '=', false).where('role', 'is not', null).execute();
  return rows.flatMap((r) => (r.role === null ? [] : [r.role]));
}

/**
 * Targets as principal ids (the escalation targets, an ask to a role): names or ids of enabled principals, and `role:<role>`,
 * every enabled human with that role. Unknown names are left out.
 */
export async function escalationTargets(db: Kysely<DB>, to: readonly string[]): Promise<string[]> {
  const roles = to.filter((t) => t.startsWith('role:')).map((t) => t.slice(5));
  const names = to.filter((t) => !t.startsWith('role:'));
  if (roles.length === 0 && names.length === 0) return [];
  const rows = await db
    .selectFrom('agents')
    .select('id')
    .where('disabled', '=', false)
    .where((eb) => {
      const any = [];
      if (names.length > 0) any.push(eb('id', 'in', names), eb('name', 'in', names));
      if (roles.length > 0) any.push(eb.and([eb('kind', '=', 'human'), eb('role', 'in', roles as never)]));
      return eb.or(any);
    })
    .orderBy('id')
    .execute();
  return rows.map((r) => r.id);
}
