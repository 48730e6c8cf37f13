import { type RawBuilder, sql, type Kysely, type Selectable } from 'kysely';
import { sendStatement, type Tx } from './connection.ts';
import { recordRunFailure } from './runs.ts';
import type { AttemptFailure, DB, Handoff, ReservationRequirement, TasksTable } from './schema.ts';

/**
 * A task row plus `waiting_on`: the ids in `blocked_by` not yet done; its artifacts' references, oldest
 * first; the reservations claiming it takes (`null`: none); and whether its review is past its SLA.
 */
export type TaskRow = Selectable<TasksTable> & { waiting_on: string[]; artifacts: ArtifactRefRow[]; child_counts: Record<string, number>; reservations: ReservationRequirement[] | null; review_overdue: boolean };

/** An artifact attached to a task, as the task row carries it (never the bytes). */
export interface ArtifactRefRow {
  id: string;
  size: number;
  content_type: string;
  sha256: string;
  /** The file name it was stored with, for people; null when none was given. */
  name: string | null;
}

/** A task id's length: `tsk_` and a 26-character ULID. */
export const ID_LENGTH = 30;

/**
 * The blockers of the outer `tasks` row that are not done yet: one primary-key lookup per blocker.
 * `b.id = ANY (tasks.blocked_by)` let the planner read the whole table instead while it was small
 * (and which plan a connection kept depended on when it first ran the statement).
 */
const OPEN_BLOCKERS = `SELECT u.id FROM unnest(tasks.blocked_by) AS u(id) WHERE (SELECT b.status <> 'done' AND b.deleted_at IS NULL FROM tasks b WHERE b.id = u.id)`;

/** True when the outer `tasks` row waits on nothing; most tasks have no blockers and skip the subquery. */
export const NO_OPEN_BLOCKERS = `(cardinality(tasks.blocked_by) = 0 OR NOT EXISTS (${OPEN_BLOCKERS}))`;

/** `waiting_on`, computed where the row is read so it is never stale. Queries must not alias `tasks`. */
const WAITING_ON = `CASE WHEN cardinality(tasks.blocked_by) = 0 THEN '{}'::text[] ELSE ARRAY(${OPEN_BLOCKERS} ORDER BY u.id) END`;
const waitingOn: RawBuilder<string[]> = sql.raw<string[]>(WAITING_ON);

/** In review past its SLA: marked by the escalation pass since its latest hand-in (spec/asks.md, Escalation). */
const REVIEW_OVERDUE = `(tasks.status = 'in_review' AND tasks.review_overdue_at IS NOT NULL AND tasks.review_overdue_at >= coalesce((tasks.handoff->>'at')::timestamptz, tasks.updated_at))`;
const reviewOverdue: RawBuilder<boolean> = sql.raw<boolean>(REVIEW_OVERDUE);

/** The task's artifact references, read with the row (an index lookup on artifacts.task_id). */
const ARTIFACT_REFS = `COALESCE((SELECT json_agg(json_build_object('id', a.id, 'size', a.size_bytes, 'content_type', a.content_type, 'sha256', a.sha256, 'name', a.name) ORDER BY a.id) FROM artifacts a WHERE a.task_id = tasks.id), '[]'::json)`;
const artifactRefs: RawBuilder<ArtifactRefRow[]> = sql.raw<ArtifactRefRow[]>(ARTIFACT_REFS);

/** The live children's counts by status (statuses with none left out); an index probe on tasks_parent. */
const CHILD_COUNTS = `(SELECT COALESCE(json_object_agg(c.status, c.n), '{}'::json) FROM (SELECT status, count(*)::int AS n FROM tasks c WHERE c.parent_id = tasks.id AND c.deleted_at IS NULL GROUP BY status) c)`;
const childCounts: RawBuilder<Record<string, number>> = sql.raw<Record<string, number>>(CHILD_COUNTS);

/**
 * The reservations the task requires (task_reservations), or null: a primary-key probe. Read in a
 * RETURNING clause it sees what earlier statements of the transaction wrote, not the statement's own.
 */
const RESERVATIONS = `(SELECT r.requirements FROM task_reservations r WHERE r.task_id = tasks.id)`;
const reservations: RawBuilder<ReservationRequirement[] | null> = sql.raw<ReservationRequirement[] | null>(RESERVATIONS);

const COLUMNS = ['id', 'title', 'description', 'status', 'priority', 'labels', 'version', 'created_at', 'created_by_id', 'created_by_kind',
  'updated_at', 'updated_by_id', 'updated_by_kind', 'lease_id', 'lease_holder_id', 'lease_holder_kind', 'lease_expires_at', 'lease_epoch', 'blocked_by',
  'deleted_at', 'assignee_id', 'assignee_kind', 'handoff', 'changes_requested_id', 'attempts', 'max_attempts', 'max_cost_micros', 'max_cost_currency',
  'not_before', 'blocked_reason', 'failures', 'parent_id', 'due_at', 'overdue_at', 'open_asks', 'review_overdue_at', 'overdue_asks', 'archived_at'] as const satisfies readonly (keyof TasksTable)[];

/** Every column of a task row, as SQL text for the select list or RETURNING clause of a statement. */
export const TASK_COLUMNS = [...COLUMNS.map((c) => `"tasks"."${c}"`), `${WAITING_ON} AS waiting_on`, `${ARTIFACT_REFS} AS artifacts`, `${CHILD_COUNTS} AS child_counts`, `${RESERVATIONS} AS reservations`, `${REVIEW_OVERDUE} AS review_overdue`].join(', ');

/**
 * The columns the compact view of a live task shows (operations/tasks/task-view.ts `toCompactTask`),
 * the answer of nearly every single-task read: a third of the row, without the subtask counts'
 * subquery; of the JSON columns, the artifact references and the hand-in (`next_actions` offers its
 * review to anyone but the principal that handed it in), and whose task it is (an agent is offered
 * status moves only on its own, unassigned or created tasks).
 */
const COMPACT_COLUMNS = ['id', 'title', 'status', 'priority', 'labels', 'version', 'updated_at',
  'lease_id', 'lease_holder_id', 'lease_holder_kind', 'lease_expires_at', 'lease_epoch', 'handoff', 'assignee_id', 'created_by_id', 'open_asks', 'overdue_asks', 'archived_at', 'not_before'] as const satisfies readonly (typeof COLUMNS)[number][];

/** A task row as `COMPACT_TASK_COLUMNS` reads it. */
export type CompactTaskRow = Pick<TaskRow, (typeof COMPACT_COLUMNS)[number] | 'waiting_on' | 'artifacts' | 'reservations' | 'review_overdue'>;

/** The compact view's columns, as SQL text for a select list. */
export const COMPACT_TASK_COLUMNS = [...COMPACT_COLUMNS.map((c) => `"tasks"."${c}"`), `${WAITING_ON} AS waiting_on`, `${ARTIFACT_REFS} AS artifacts`, `${RESERVATIONS} AS reservations`, `${REVIEW_OVERDUE} AS review_overdue`].join(', ');

/** Every column of a task row, for the query builder's select clauses. */
export const taskColumns = [...COLUMNS.map((c) => `tasks.${c}` as const), waitingOn.as('waiting_on'), artifactRefs.as('artifacts'), childCounts.as('child_counts'), reservations.as('reservations'), reviewOverdue.as('review_overdue')];

/**
 * The columns a list item's default view shows (operations/tasks/task-view.ts `toListTask`): no
 * description, and neither the artifacts' nor the subtask counts' subquery, which cost an index probe
 * each per row of every page (bench/README.md, "Growth"). `deleted_at` names a `since` delta's tombstones.
 */
const LIST_COLUMNS = ['id', 'title', 'status', 'priority', 'labels', 'version', 'updated_at', 'lease_id', 'lease_holder_id', 'lease_holder_kind',
  'lease_expires_at', 'lease_epoch', 'deleted_at', 'parent_id', 'due_at', 'overdue_at', 'attempts', 'max_attempts', 'not_before', 'blocked_reason', 'assignee_id', 'assignee_kind', 'open_asks', 'overdue_asks', 'archived_at'] as const satisfies readonly (typeof COLUMNS)[number][];

/** A task row as a list page in the default view reads it. */
export type ListTaskRow = Pick<TaskRow, (typeof LIST_COLUMNS)[number] | 'waiting_on' | 'review_overdue'>;

export const listTaskColumns = [...LIST_COLUMNS.map((c) => `tasks.${c}` as const), waitingOn.as('waiting_on'), reviewOverdue.as('review_overdue')];

export interface NewTaskRow {
  id: string;
  title: string;
  description: string;
  status: string;
  priority: number;
  labels: string[];
  blocked_by: string[];
  created_at: Date;
  created_by_id: string;
  created_by_kind: string;
  assignee_id: string | null;
  assignee_kind: 'human' | 'agent' | null;
  max_attempts: number | null;
  max_cost_micros?: number | null;
  max_cost_currency?: string | null;
  parent_id: string | null;
  not_before: Date | null;
  due_at: Date | null;
}

// The hottest statements are fixed SQL texts sent without the query builder (`sendStatement`):
// building them on every request cost more CPU than the rest of the request's SQL work (bench/RESULTS.md).

const INSERT_TASK = `
    INSERT INTO tasks (id, title, description, status, priority, labels, blocked_by, created_at, created_by_id, created_by_kind,
      updated_at, updated_by_id, updated_by_kind, assignee_id, assignee_kind, max_attempts, parent_id, not_before, due_at, max_cost_micros, max_cost_currency)
    VALUES ($1, $2, $3, $4, $5, $6::text[], $7::text[],
      $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
    RETURNING ${TASK_COLUMNS}`;

export async function insertTask(tx: Tx, row: NewTaskRow): Promise<TaskRow> {
  const { rows } = await sendStatement<TaskRow>(tx, INSERT_TASK, [
    row.id, row.title, row.description, row.status, row.priority, row.labels, row.blocked_by,
    row.created_at, row.created_by_id, row.created_by_kind, row.created_at, row.created_by_id, row.created_by_kind,
    row.assignee_id, row.assignee_kind, row.max_attempts, row.parent_id, row.not_before, row.due_at, row.max_cost_micros ?? null, row.max_cost_currency ?? null,
  ]);
  const task = rows[0];
  if (!task) throw new Error(`insert of task ${row.id} returned no row`);
  return task;
}

const FIND_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`;

export async function findTask(db: Kysely<DB>, id: string): Promise<TaskRow | undefined> {
  const { rows } = await sendStatement<TaskRow>(db, FIND_TASK, [id]);
  return rows[0];
}

const FIND_COMPACT_TASK = `SELECT ${COMPACT_TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL`;

/** A live task's compact-view columns only: a GET of the default view (bench/README.md, issue 21). */
export async function findCompactTask(db: Kysely<DB>, id: string): Promise<CompactTaskRow | undefined> {
  const { rows } = await sendStatement<CompactTaskRow>(db, FIND_COMPACT_TASK, [id]);
  return rows[0];
}

const LOCK_TASK = `${FIND_TASK} FOR UPDATE`;

/** Reads a task and locks its row until the transaction ends. */
export async function lockTask(tx: Tx, id: string): Promise<TaskRow | undefined> {
  const { rows } = await sendStatement<TaskRow>(tx, LOCK_TASK, [id]);
  return rows[0];
}

const LOCK_TASK_IDS = `SELECT id FROM tasks WHERE id = ANY ($1::text[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`;

/**
 * Locks several tasks, in id order (the rows are locked as sorted), so two callers locking
 * overlapping sets cannot deadlock. Answers the ids locked: missing or deleted tasks are left out.
 */
export async function lockTaskIds(tx: Tx, ids: readonly string[]): Promise<Set<string>> {
  const { rows } = await sendStatement<{ id: string }>(tx, LOCK_TASK_IDS, [ids]);
  return new Set(rows.map((row) => row.id));
}

// Parameters: the leases, now, the actor's id and kind, the tasks. Each lease is found by primary
// key and updated by its row id (see store/leases.ts findLeases for why not `id = ANY`); the
// leases cannot move meanwhile, since every lease change locks its task first.
const REQUEUE_TASKS = `
    WITH ended AS (
      UPDATE leases SET state = 'released', ended_at = $2
      FROM (SELECT l.ctid AS row_id FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT ctid FROM leases WHERE leases.id = u.id OFFSET 0) AS l) AS held
      WHERE leases.ctid = held.row_id)
    UPDATE tasks SET status = 'todo', lease_id = NULL, lease_holder_id = NULL, lease_holder_kind = NULL, lease_expires_at = NULL,
      updated_at = $2, updated_by_id = $3, updated_by_kind = $4, version = version + 1
    WHERE id = ANY ($5::text[])
    RETURNING ${TASK_COLUMNS}`;

/**
 * Releases leases and returns their locked tasks to todo, in one statement: what `updateTask` with
 * `NO_LEASE` and a `released` ending does to one task, for many. Answers the tasks in no set order.
 */
export async function requeueTasks(tx: Tx, held: { leaseIds: readonly string[]; taskIds: readonly string[] }, by: { now: Date; id: string; kind: string }): Promise<TaskRow[]> {
  const { rows } = await sendStatement<TaskRow>(tx, REQUEUE_TASKS, [held.leaseIds, by.now, by.id, by.kind, held.taskIds]);
  if (rows.length !== held.taskIds.length) throw new Error(`requeue of ${held.taskIds.length} tasks updated ${rows.length}`);
  return rows;
}

// Parameters: the leases, now, the actor's id and kind, the handoffs ({id, handoff} rows as JSON),
// the tasks. The leases are found as in REQUEUE_TASKS; the task ids come again as an array, so the
// planner reads them by primary key rather than the whole table for the JSON rows it cannot count.
const HAND_IN_TASKS = `
    WITH ended AS (
      UPDATE leases SET state = 'ended', ended_at = $2
      FROM (SELECT l.ctid AS row_id FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT ctid FROM leases WHERE leases.id = u.id OFFSET 0) AS l) AS held
      WHERE leases.ctid = held.row_id)
    UPDATE tasks SET status = 'in_review', lease_id = NULL, lease_holder_id = NULL, lease_holder_kind = NULL, lease_expires_at = NULL,
      handoff = h.handoff, changes_requested_id = NULL, updated_at = $2, updated_by_id = $3, updated_by_kind = $4, version = tasks.version + 1
    FROM jsonb_to_recordset($5::jsonb) AS h(id text, handoff jsonb)
    WHERE tasks.id = h.id AND tasks.id = ANY ($6::text[])
    RETURNING ${TASK_COLUMNS}`;

/**
 * Hands in locked tasks in one statement: what `updateTask` to in_review with `NO_LEASE`, a handoff
 * and an `ended` lease does to one task, for many. Answers the tasks in no set order.
 */
export async function handInTasks(
  tx: Tx,
  held: { leaseIds: readonly string[]; handoffs: readonly { id: string; handoff: Handoff }[] },
  by: { now: Date; id: string; kind: string },
): Promise<TaskRow[]> {
  const taskIds = held.handoffs.map((h) => h.id);
  const { rows } = await sendStatement<TaskRow>(tx, HAND_IN_TASKS, [held.leaseIds, by.now, by.id, by.kind, JSON.stringify(held.handoffs), taskIds]);
  if (rows.length !== taskIds.length) throw new Error(`hand-in of ${taskIds.length} tasks updated ${rows.length}`);
  return rows;
}

export interface TaskChanges {
  title?: string;
  description?: string;
  status?: string;
  priority?: number;
  labels?: string[];
  blocked_by?: string[];
  /** The task's current lease; the lease row itself is inserted or ended by the caller. */
  lease_id?: string | null;
  lease_holder_id?: string | null;
  lease_holder_kind?: 'human' | 'agent' | null;
  lease_expires_at?: Date | null;
  lease_epoch?: number;
  deleted_at?: Date;
  assignee_id?: string | null;
  assignee_kind?: 'human' | 'agent' | null;
  handoff?: Handoff | null;
  changes_requested_id?: string | null;
  attempts?: number;
  not_before?: Date | null;
  blocked_reason?: 'attempts_exhausted' | null;
  failures?: AttemptFailure[];
  max_cost_micros?: number | null;
  max_cost_currency?: string | null;
  parent_id?: string | null;
  due_at?: Date | null;
  overdue_at?: Date | null;
  archived_at?: Date | null;
}

/** The changes that clear a task's hold; the lease row itself is ended by the caller. */
export const NO_LEASE = { lease_id: null, lease_holder_id: null, lease_holder_kind: null, lease_expires_at: null } as const satisfies TaskChanges;

/** The columns `updateTask` may set: every field of TaskChanges, and who and when. */
const SETTABLE = new Set<string>(['title', 'description', 'status', 'priority', 'labels', 'blocked_by', 'lease_id', 'lease_holder_id', 'lease_holder_kind',
  'lease_expires_at', 'lease_epoch', 'deleted_at', 'assignee_id', 'assignee_kind', 'handoff', 'changes_requested_id', 'attempts', 'not_before', 'blocked_reason', 'failures', 'parent_id', 'due_at', 'overdue_at', 'max_cost_micros', 'max_cost_currency', 'archived_at', 'updated_at', 'updated_by_id', 'updated_by_kind'] satisfies readonly (keyof TaskUpdate)[]);

type TaskUpdate = TaskChanges & { updated_at: Date; updated_by_id: string; updated_by_kind: string };

/** A lease `updateTask` ends in the same statement: how it ended. Its end time is the update's `updated_at`. */
export interface LeaseEnding {
  id: string;
  state: 'released' | 'expired' | 'ended';
  /** Why the run failed, when it did (spec/runs.md "Failure codes"). */
  failure_code?: string | undefined;
}

/**
 * Applies changes to a locked task and bumps its version; undefined changes are left out. With
 * `ending`, the same statement also ends that lease (the caller clears it from the task with
 * `NO_LEASE`): one round trip for the two rows every release, hand-in and delete changes.
 */
export async function updateTask(
  tx: Tx,
  id: string,
  changes: TaskUpdate,
  ending?: LeaseEnding,
): Promise<TaskRow> {
  // A lease ending goes first in the text (a CTE), so its parameters come first too.
  const parameters: unknown[] = ending ? [ending.state, changes.updated_at, ending.id] : [];
  const columns: string[] = [];
  for (const [column, value] of Object.entries(changes)) {
    if (value === undefined) continue;
    if (!SETTABLE.has(column)) throw new Error(`updateTask cannot set column ${column}`);
    columns.push(column);
    // jsonb goes as text on both drivers.
    parameters.push((column === 'handoff' || column === 'failures') && value !== null ? JSON.stringify(value) : value);
  }
  parameters.push(id);
  const { rows } = await sendStatement<TaskRow>(tx, updateText(columns, ending !== undefined), parameters);
  const task = rows[0];
  if (!task) throw new Error(`update of task ${id} returned no row`);
  if (ending?.failure_code) await recordRunFailure(tx, ending.id, ending.failure_code, changes.updated_at);
  return task;
}

/** The update's text for this list of columns (one of the SETTABLE ones each; values go in parameters). */
function updateText(columns: readonly string[], endsLease: boolean): string {
  const first = endsLease ? 4 : 1;
  const endLease = endsLease ? 'WITH ended AS (UPDATE leases SET state = $1, ended_at = $2 WHERE id = $3) ' : '';
  const sets = columns.map((column, i) => `"${column}" = $${first + i}`).join(', ');
  return `${endLease}UPDATE tasks SET ${sets}, version = version + 1 WHERE id = $${first + columns.length} RETURNING ${TASK_COLUMNS}`;
}

/** How many of these ids name existing tasks (to validate `blocked_by`). */
export async function existingTaskIds(db: Kysely<DB>, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('tasks').select('id').where('id', '=', (eb) => eb.fn.any(eb.val(ids))).where('deleted_at', 'is', null).execute();
  return new Set(rows.map((r) => r.id));
}

/** Which of these ids name a task that was ever created, deleted ones included (their history stays readable). */
export async function tasksEverExisted(db: Kysely<DB>, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('tasks').select('id').where('id', '=', (eb) => eb.fn.any(eb.val(ids))).execute();
  return new Set(rows.map((r) => r.id));
}

/** How many live tasks are assigned to a principal, by status (statuses with none are left out). */
export async function countAssigned(db: Kysely<DB>, assigneeId: string): Promise<Record<string, number>> {
  const rows = await db
    .selectFrom('tasks')
    .select(['status', (eb) => eb.fn.countAll<string>().as('n')])
    .where('assignee_id', '=', assigneeId)
    .where('deleted_at', 'is', null)
    .groupBy('status')
    .execute();
  return Object.fromEntries(rows.map((r) => [r.status, Number(r.n)]));
}
