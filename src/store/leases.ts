import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, LeasesTable } from './schema.ts';
import { NO_OPEN_BLOCKERS, TASK_COLUMNS, type TaskRow } from './tasks.ts';
import { sendStatement, type Tx } from './connection.ts';

export type LeaseRow = Selectable<LeasesTable>;

/**
 * What a claim needs of a task it picked: its id, its epoch, its status (`in_progress`: its lease
 * lapsed), its labels (for the budgets it spends from) and the reservations claiming it takes.
 */
export type ClaimableRow = Pick<TaskRow, 'id' | 'status' | 'lease_epoch' | 'labels' | 'reservations'>;

export interface ClaimQuery {
  now: Date;
  /** The claimer: a task assigned to someone else is never picked. */
  claimerId: string;
  minPriority: number;
  labels: string[];
  limit: number;
  /** Tasks not to pick: those carrying any of these labels, and these ids (budgets exhausted, spec/runs.md; tasks the claim gave back or passed over). */
  avoid?: { labels: readonly string[]; ids: readonly string[] } | undefined;
}

/**
 * Picks and locks up to `limit` claimable tasks in claim order (priority, then age): `todo` tasks
 * whose blockers are all done, and `in_progress` tasks whose lease has run out (found without waiting
 * for the sweeper; the caller counts that lapse, as the sweeper would, before it grants anything).
 * SKIP LOCKED: concurrent claimers, and sweepers, never wait on or take the same row.
 * The two kinds are picked apart, each by its own index, then merged: one `OR` filter made the
 * planner read and sort the whole queue on every claim (bench/CLAIMS.md).
 *
 * The priority floor, the labels and a limit above one are parameters: the statement's eight texts
 * (with or without a label filter, one task or several, avoiding tasks on exhausted budgets or not) are fixed by the code, so no caller can
 * make the database prepare more. It reads only what the grant needs, not the whole row (the grant
 * returns that), and a claim of one task says `LIMIT 1` in its text: with the limit a parameter,
 * PostgreSQL costs the generic plan as if a tenth of the queue were wanted and plans the statement
 * anew on every claim, which with the whole row's three subqueries in both branches cost ten times
 * more than running it (bench/README.md, "Planning the claim").
 */
export async function pickClaimable(tx: Tx, q: ClaimQuery): Promise<ClaimableRow[]> {
  const labels = q.labels.length > 0;
  const one = q.limit === 1;
  const avoid = q.avoid !== undefined && (q.avoid.labels.length > 0 || q.avoid.ids.length > 0);
  const text = (avoid ? AVOIDING : PICK)[labels ? 'labels' : 'any'][one ? 'one' : 'many'];
  const avoided = avoid ? [q.avoid?.labels ?? [], q.avoid?.ids ?? []] : [];
  const parameters = [q.now, q.minPriority, q.claimerId, ...(labels ? [q.labels] : []), ...(one ? [] : [q.limit]), ...avoided];
  const { rows } = await sendStatement<ClaimableRow>(tx, text, parameters);
  return rows;
}

const CLAIMABLE_COLUMNS = 'id, status, lease_epoch, labels';

/**
 * Parameters: now, the priority floor, the claimer, then the labels every task must carry (with a label filter), then the limit (several),
 * then (avoiding) the labels and the ids of tasks not to pick. A claim with nothing to avoid (no
 * exhausted budget, no task it gave back or passed over) sends the texts that avoid nothing.
 * `labels` is read for the budgets a claim spends from, and the required reservations of the tasks
 * picked (a primary-key probe each, after the limit) so the claim checks them without a round trip
 * of its own.
 */
const pickText = (labels: boolean, one: boolean, avoid: boolean) => {
  const next = 4 + (labels ? 1 : 0) + (one ? 0 : 1);
  const avoiding = avoid ? `AND NOT (labels && $${next}::text[]) AND id <> ALL($${next + 1}::text[])` : '';
  const filters = `priority >= $2 AND deleted_at IS NULL AND (assignee_id IS NULL OR assignee_id = $3) AND (not_before IS NULL OR not_before <= $1) ${labels ? 'AND labels @> $4::text[]' : ''} ${avoiding} AND ${NO_OPEN_BLOCKERS}`;
  const limit = one ? '1' : labels ? '$5' : '$4';
  return `
    WITH queued AS (
      SELECT ${CLAIMABLE_COLUMNS}, priority AS claim_priority FROM tasks WHERE status = 'todo' AND ${filters}
      ORDER BY priority DESC, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), lapsed AS (
      SELECT ${CLAIMABLE_COLUMNS}, priority AS claim_priority FROM tasks WHERE status = 'in_progress' AND lease_expires_at <= $1 AND ${filters}
      ORDER BY priority DESC, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    SELECT picked.*, (SELECT r.requirements FROM task_reservations r WHERE r.task_id = picked.id) AS reservations
    FROM (SELECT * FROM queued UNION ALL SELECT * FROM lapsed) picked
    ORDER BY claim_priority DESC, id LIMIT ${limit}`;
};
const PICK = {
  any: { one: pickText(false, true, false), many: pickText(false, false, false) },
  labels: { one: pickText(true, true, false), many: pickText(true, false, false) },
};
const AVOIDING = {
  any: { one: pickText(false, true, true), many: pickText(false, false, true) },
  labels: { one: pickText(true, true, true), many: pickText(true, false, true) },
};

/** What a grant needs of a locked, claimable task: its id and the fencing epoch its new lease follows. */
export type GrantedTask = Pick<TaskRow, 'id' | 'lease_epoch'>;

export interface Grant {
  task: GrantedTask;
  lease: {
    id: string;
    holder_id: string;
    holder_kind: 'human' | 'agent';
    token_id: string | null;
    machine: string | null;
    ttl_s: number;
    expires_at: Date;
  };
}

/**
 * Grants leases on locked, claimable tasks (none still holds a lease: a lapsed one is expired and
 * counted first): in one statement for any number of grants, inserts the new leases and moves the
 * tasks to in_progress with a higher fencing epoch. The update repeats the task ids: joined only to the JSON rows
 * (estimated at 100), the planner read the whole tasks table on every claim. One grant names its
 * task as a scalar: an array parameter's generic plan assumes ten elements, costs itself above the
 * custom plan, and PostgreSQL then re-plans the statement on every single claim.
 */
export async function grantLeases(tx: Tx, grants: readonly Grant[], now: Date): Promise<{ tasks: GrantedRow[]; leases: LeaseRow[] }> {
  if (grants.length === 0) return { tasks: [], leases: [] };
  // The lease rows are wholly known here, so the insert need not send them back.
  const leases: LeaseRow[] = grants.map((g) => ({
    ...g.lease,
    task_id: g.task.id,
    epoch: g.task.lease_epoch + 1,
    state: 'active',
    acquired_at: now,
    renewed_at: now,
    warned_at: null,
    ended_at: null,
    created_at: now,
    created_by_id: g.lease.holder_id,
    created_by_kind: g.lease.holder_kind,
  }));
  // The task update joins the inserted rows (RETURNING), so the JSON is sent and parsed once.
  const single = grants.length === 1;
  const ids = single ? grants[0]?.task.id : grants.map((g) => g.task.id);
  // Only the columns the statement reads from the JSON; the rest it sets from `now` and the holder.
  const granted = JSON.stringify(
    leases.map((l) => ({ id: l.id, task_id: l.task_id, holder_id: l.holder_id, holder_kind: l.holder_kind, token_id: l.token_id, machine: l.machine, epoch: l.epoch, ttl_s: l.ttl_s, expires_at: l.expires_at })),
  );
  const { rows: tasks } = await sendStatement<GrantedRow>(tx, single ? GRANT_ONE : GRANT_MANY, [now, granted, ids]);
  return { tasks, leases };
}

/**
 * A task as its grant returns it: the whole row, and whether a human has commented on it, so that a
 * claim reads the discussion only of the tasks that have one (most have none: a round trip saved).
 */
export type GrantedRow = TaskRow & { discussed: boolean };

/** Parameters: now, the lease rows as one JSON array, the task id (one grant) or ids (several). */
const grantText = (tasks: string) => `
    WITH granted AS (
      INSERT INTO leases (id, task_id, holder_id, holder_kind, token_id, machine, epoch, ttl_s, state, acquired_at, renewed_at, expires_at,
        created_at, created_by_id, created_by_kind)
      SELECT l.id, l.task_id, l.holder_id, l.holder_kind, l.token_id, l.machine, l.epoch, l.ttl_s, 'active', $1, $1, l.expires_at,
        $1, l.holder_id, l.holder_kind
      FROM jsonb_to_recordset($2::jsonb) AS l(id text, task_id text, holder_id text, holder_kind text, token_id text,
        machine text, epoch int, ttl_s int, expires_at timestamptz)
      RETURNING id, task_id, holder_id, holder_kind, expires_at
    )
    UPDATE tasks SET status = 'in_progress', lease_id = g.id, lease_holder_id = g.holder_id,
      lease_holder_kind = g.holder_kind, lease_expires_at = g.expires_at, lease_epoch = tasks.lease_epoch + 1,
      version = tasks.version + 1, updated_at = $1, updated_by_id = g.holder_id, updated_by_kind = g.holder_kind
    FROM granted g
    WHERE tasks.id = g.task_id AND ${tasks}
    RETURNING ${TASK_COLUMNS},
      (EXISTS (SELECT 1 FROM comments c WHERE c.task_id = tasks.id AND c.author_kind = 'human' AND c.deleted_at IS NULL)
        OR EXISTS (SELECT 1 FROM asks a WHERE a.task_id = tasks.id AND a.status IN ('answered', 'defaulted'))) AS discussed`;
const GRANT_ONE = grantText('tasks.id = $3');
const GRANT_MANY = grantText('tasks.id = ANY ($3::text[])');

export type NewLeaseRow = Omit<LeaseRow, 'warned_at' | 'ended_at'>;

export async function insertLease(tx: Tx, row: NewLeaseRow): Promise<LeaseRow> {
  return tx.insertInto('leases').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findLease(db: Kysely<DB>, id: string): Promise<LeaseRow | undefined> {
  const { rows } = await sendStatement<LeaseRow>(db, 'SELECT * FROM leases WHERE id = $1', [id]);
  return rows[0];
}

const LEASE_FIELDS = ['id', 'task_id', 'holder_id', 'holder_kind', 'token_id', 'machine', 'epoch', 'ttl_s', 'state', 'acquired_at', 'renewed_at', 'expires_at',
  'warned_at', 'ended_at', 'created_at', 'created_by_id', 'created_by_kind'] as const satisfies readonly (keyof LeaseRow)[];

// The lease's columns come prefixed, beside the task's. Only the task is locked.
const LOCK_LEASE_TASK = `SELECT ${TASK_COLUMNS}, ${LEASE_FIELDS.map((f) => `leases.${f} AS lease__${f}`).join(', ')}
    FROM leases JOIN tasks ON tasks.id = leases.task_id WHERE leases.id = $1 AND tasks.deleted_at IS NULL FOR UPDATE OF tasks`;

/**
 * Locks a lease's task and reads the lease, in one round trip; undefined when the lease or its
 * live task does not exist. The task is read as locked, but the lease as it was before the lock
 * was granted: when the task changed meanwhile, the lease may have too (read it again).
 */
export async function lockLeaseTask(tx: Tx, id: string): Promise<{ lease: LeaseRow; task: TaskRow } | undefined> {
  const { rows } = await sendStatement<Record<string, unknown>>(tx, LOCK_LEASE_TASK, [id]);
  const row = rows[0];
  return row ? splitLeaseTask(row) : undefined;
}

function splitLeaseTask(row: Record<string, unknown>): { lease: LeaseRow; task: TaskRow } {
  const task: Record<string, unknown> = {};
  const lease: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(row)) {
    if (key.startsWith('lease__')) lease[key.slice('lease__'.length)] = value;
    else task[key] = value;
  }
  return { lease: lease as LeaseRow, task: task as TaskRow };
}

/**
 * Whether a lease read beside its locked task (or before the lock) is still current: every lease
 * change locks the task first and writes the task's copy of the lease too (a heartbeat its expiry),
 * so a task naming this live lease with the same expiry means the lease has not moved.
 */
export function leaseIsCurrent(lease: LeaseRow, task: TaskRow): boolean {
  return lease.state === 'active' && task.lease_id === lease.id && task.lease_expires_at?.getTime() === lease.expires_at.getTime();
}

// As LOCK_LEASE_TASK for many leases, each found by primary key (see FIND_LEASES); tasks locked in id order.
const LOCK_LEASES_TASKS = `SELECT ${TASK_COLUMNS}, ${LEASE_FIELDS.map((f) => `leases.${f} AS lease__${f}`).join(', ')}
    FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT * FROM leases WHERE leases.id = u.id OFFSET 0) AS leases
    JOIN tasks ON tasks.id = leases.task_id WHERE tasks.deleted_at IS NULL ORDER BY tasks.id FOR UPDATE OF tasks`;

/** `lockLeaseTask` for many leases in one round trip, the tasks locked in id order (so overlapping callers cannot deadlock); leases not found are left out. */
export async function lockLeasesTasks(tx: Tx, ids: readonly string[]): Promise<{ lease: LeaseRow; task: TaskRow }[]> {
  // One lease sends the scalar statement, whose generic plan PostgreSQL keeps (see `renewLeases`).
  const [one] = ids;
  if (ids.length === 1 && one !== undefined) {
    const held = await lockLeaseTask(tx, one);
    return held ? [held] : [];
  }
  const { rows } = await sendStatement<Record<string, unknown>>(tx, LOCK_LEASES_TASKS, [ids]);
  return rows.map(splitLeaseTask);
}

/**
 * The leases by id, each looked up by primary key. `id = ANY ($1)` would let a plan made while the
 * table was small (a generic plan is kept until the next ANALYZE) scan every lease, and the table
 * gains a row per claim.
 */
const FIND_LEASES = 'SELECT l.* FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT * FROM leases WHERE leases.id = u.id OFFSET 0) AS l';

export async function findLeases(db: Kysely<DB>, ids: readonly string[]): Promise<LeaseRow[]> {
  const { rows } = await sendStatement<LeaseRow>(db, FIND_LEASES, [ids]);
  return rows;
}

/** The most recent lease a task had, for handing reviewed work back to its holder. */
export async function latestLease(db: Kysely<DB>, taskId: string): Promise<LeaseRow | undefined> {
  return db.selectFrom('leases').selectAll().where('task_id', '=', taskId).orderBy('acquired_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
}

export interface Renewal {
  ttlS: number;
  expiresAt: Date;
  now: Date;
}

/**
 * Renews leases whose tasks the caller has locked (and found current), all of one workspace, in one
 * round trip: each one's expiry, TTL and `renewed_at`, and its task's copy of the expiry; answers
 * the renewed rows (wholly known here, so not read back), in the order given, and whether any live
 * budget could apply to each one's spending — its holder's, its task's, its workspace's or one of
 * the task's labels' (`budgetsFor`'s match), so that a heartbeat reads budgets only when one can.
 * One lease sends the scalar statement: an array parameter's generic plan assumes ten elements, costs itself above the custom plan, and
 * PostgreSQL would plan the statement anew on every heartbeat (see `grantLeases`).
 */
export async function renewLeases(
  tx: Tx,
  renewals: readonly { lease: LeaseRow; task: Pick<TaskRow, 'id' | 'labels'>; renewal: Renewal }[],
  workspaceId: string,
): Promise<{ lease: LeaseRow; budgeted: boolean }[]> {
  const [one] = renewals;
  if (one === undefined) return [];
  let budgeted: Set<string>;
  if (renewals.length === 1) {
    const { lease, task, renewal } = one;
    const { rows } = await sendStatement<{ budgeted: boolean }>(tx, RENEW, [lease.id, task.id, renewal.ttlS, renewal.expiresAt, renewal.now, lease.holder_id, workspaceId, task.labels]);
    budgeted = new Set(rows[0]?.budgeted === true ? [lease.id] : []);
  } else {
    const rows = JSON.stringify(renewals.map(({ lease, task, renewal }) => ({ lease_id: lease.id, task_id: task.id, ttl_s: renewal.ttlS, expires_at: renewal.expiresAt, renewed_at: renewal.now, holder_id: lease.holder_id })));
    const answer = await sendStatement<{ lease_id: string }>(tx, RENEW_MANY, [rows, workspaceId, renewals.map((r) => r.task.id), renewals.map((r) => r.lease.id)]);
    budgeted = new Set(answer.rows.map((row) => row.lease_id));
  }
  return renewals.map(({ lease, renewal }) => ({
    lease: { ...lease, ttl_s: renewal.ttlS, expires_at: renewal.expiresAt, renewed_at: renewal.now, warned_at: null },
    budgeted: budgeted.has(lease.id),
  }));
}

// Parameters: lease, task, TTL, expiry, now, holder, workspace, the task's labels. Data-modifying CTEs run whether read or not.
const RENEW = `
    WITH renewed_task AS (UPDATE tasks SET lease_expires_at = $4 WHERE id = $2 AND lease_id = $1),
      renewed AS (UPDATE leases SET ttl_s = $3, expires_at = $4, renewed_at = $5, warned_at = NULL WHERE id = $1)
    SELECT EXISTS (SELECT 1 FROM budgets WHERE deleted_at IS NULL AND ((applies_to = 'agent' AND target = $6) OR (applies_to = 'task' AND target = $2)
      OR (applies_to = 'workspace' AND target = $7) OR (applies_to = 'label' AND target = ANY ($8::text[])))) AS budgeted`;

// Parameters: the renewals as one JSON array, the workspace, the task ids, the lease ids. Answers the leases a budget may
// apply to (RENEW's match; the labels read from the task row, which the renewal does not change). The updates repeat
// the ids: joined only to the JSON rows (estimated at 100), the planner could read a whole table (see grantText).
const RENEW_MANY = `
    WITH r AS (SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(lease_id text, task_id text, ttl_s int, expires_at timestamptz,
        renewed_at timestamptz, holder_id text)),
      renewed_task AS (UPDATE tasks SET lease_expires_at = r.expires_at FROM r
        WHERE tasks.id = ANY ($3::text[]) AND tasks.id = r.task_id AND tasks.lease_id = r.lease_id),
      renewed AS (UPDATE leases SET ttl_s = r.ttl_s, expires_at = r.expires_at, renewed_at = r.renewed_at, warned_at = NULL FROM r
        WHERE leases.id = ANY ($4::text[]) AND leases.id = r.lease_id)
    SELECT r.lease_id FROM r WHERE EXISTS (SELECT 1 FROM budgets WHERE deleted_at IS NULL AND ((applies_to = 'agent' AND target = r.holder_id)
      OR (applies_to = 'task' AND target = r.task_id) OR (applies_to = 'workspace' AND target = $2)
      OR (applies_to = 'label' AND target = ANY (SELECT unnest(labels) FROM tasks WHERE tasks.id = r.task_id))))`;

export interface LeaseListQuery {
  holderId: string | undefined;
  taskId: string | undefined;
  state: 'active' | 'ended' | undefined;
  now: Date;
  /** Keyset position: ids strictly below this one (newest first). */
  beforeId: string | undefined;
  limit: number;
}

export async function listLeases(db: Kysely<DB>, q: LeaseListQuery): Promise<LeaseRow[]> {
  return db
    .selectFrom('leases')
    .selectAll()
    .$if(q.holderId !== undefined, (qb) => qb.where('holder_id', '=', q.holderId ?? ''))
    .$if(q.taskId !== undefined, (qb) => qb.where('task_id', '=', q.taskId ?? ''))
    // An active row past its expiry is already expired for every reader; the sweeper only catches up.
    .$if(q.state === 'active', (qb) => qb.where('state', '=', 'active').where('expires_at', '>', q.now))
    .$if(q.state === 'ended', (qb) => qb.where((eb) => eb.or([eb('state', '<>', 'active'), eb('expires_at', '<=', q.now)])))
    .$if(q.beforeId !== undefined, (qb) => qb.where('id', '<', q.beforeId ?? ''))
    .orderBy('id', 'desc')
    .limit(q.limit + 1)
    .execute();
}

export async function countActiveLeases(db: Kysely<DB>, holderId: string, now: Date): Promise<number> {
  const row = await db
    .selectFrom('leases')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('holder_id', '=', holderId)
    .where('state', '=', 'active')
    .where('expires_at', '>', now)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** When the earliest task waiting out a back-off becomes claimable for this claimer and its claim filter (priority floor, labels), if any does. */
export async function nextClaimableAt(db: Kysely<DB>, q: Pick<ClaimQuery, 'now' | 'claimerId' | 'minPriority' | 'labels'>): Promise<Date | null> {
  const { now, claimerId } = q;
  let query = db
    .selectFrom('tasks')
    .select((eb) => eb.fn.min('not_before').as('at'))
    // A literal status, so a prepared statement's generic plan can use the partial index
    // tasks_queue_not_before (migration 0333), which holds only the tasks waiting out a back-off.
    .where(sql<boolean>`status = 'todo' AND not_before IS NOT NULL`)
    .where('deleted_at', 'is', null)
    .where('not_before', '>', now)
    .where((eb) => eb.or([eb('assignee_id', 'is', null), eb('assignee_id', '=', claimerId)]))
    .where('priority', '>=', q.minPriority);
  if (q.labels.length > 0) query = query.where(sql<boolean>`labels @> ${q.labels}::text[]`);
  const row = await query.executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/**
 * The first task `claimerId` could claim now (claim order), without locking or claiming it: what
 * `wait` reports as work. A lapsed lease is left to the claim and the sweeper.
 */
export async function peekClaimable(db: Kysely<DB>, claimerId: string, now: Date): Promise<{ id: string; title: string } | undefined> {
  const { rows } = await sql<{ id: string; title: string }>`
    SELECT id, title FROM tasks
    WHERE status = 'todo' AND deleted_at IS NULL AND (assignee_id IS NULL OR assignee_id = ${claimerId})
      AND (not_before IS NULL OR not_before <= ${now}) AND ${sql.raw(NO_OPEN_BLOCKERS)}
    ORDER BY priority DESC, id LIMIT 1`.execute(db);
  return rows[0];
}
