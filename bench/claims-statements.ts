/**
 * The claim, release and complete transactions as plain SQL on a pg pool: the statements Baton's
 * claim-next (src/store/leases.ts pickClaimable + grantLeases, then, for discussed tasks, the discussion's
 * src/store/comments.ts latestHumanComments; src/store/events.ts appendEvents),
 * release (src/operations/leases/held-lease.ts lockLiveLease, then updateTask ending the lease), batch release
 * (src/operations/leases/release-leases.ts) and a holder's
 * move to in_review (src/operations/tasks/update-task.ts) send for the work itself. Not here, by choice: Baton's per-request authentication and rate counting, its
 * idempotency-key claim and stored response, input validation and response shaping — that is the
 * service's overhead the claims benchmark shows. Given an `Overhead`, each transaction also sends
 * Baton's per-request statements (bench/baseline-statements.ts), so the same-SQL route sends
 * exactly what Baton sends and the ratio to it shows only what Baton does in process.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { prepared } from './pg-pools.ts';
import { createIds } from '../src/ids.ts';
import { APPENDING, EVENTS_CHANNEL } from '../src/store/events.ts';
import { NO_OPEN_BLOCKERS, TASK_COLUMNS } from '../src/store/tasks.ts';
import { hashToken } from '../src/tokens.ts';
import { AUTHENTICATE, CLAIM_KEY, STORE_RESPONSE_WITH_EVENTS } from './baseline-statements.ts';

const ids = createIds();

/** The holder and actor of every raw claim; lease and event rows only name it (no foreign key). */
const ACTOR = { id: 'agt_bench_raw', kind: 'agent', token_id: null, machine: 'bench' } as const;
const TTL_S = 300;

// pickClaimable, with no label filter: the floor ($2) and the claimer ($3) are parameters, and the limit: `1` in the
// text for one task, else the last parameter ($4), as Baton sends them; only the columns the grant needs.
const PICK_FILTERS = `priority >= $2 AND deleted_at IS NULL AND (assignee_id IS NULL OR assignee_id = $3) AND (not_before IS NULL OR not_before <= $1)  AND ${NO_OPEN_BLOCKERS}`;
const PICK_COLUMNS = 'id, status, lease_epoch';
// src/store/leases.ts pickClaimable: queued and lapsed work picked apart by their own indexes, then merged.
const pick = (limit: '1' | '$4') => `
    WITH queued AS (
      SELECT ${PICK_COLUMNS}, priority AS claim_priority FROM tasks WHERE status = 'todo' AND ${PICK_FILTERS}
      ORDER BY priority DESC, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    ), lapsed AS (
      SELECT ${PICK_COLUMNS}, priority AS claim_priority FROM tasks WHERE status = 'in_progress' AND lease_expires_at <= $1 AND ${PICK_FILTERS}
      ORDER BY priority DESC, id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    SELECT * FROM (SELECT * FROM queued UNION ALL SELECT * FROM lapsed) picked
    ORDER BY claim_priority DESC, id LIMIT ${limit}`;
const PICK_ONE = pick('1');
const PICK_MANY = pick('$4');
// grantLeases: the lease insert and the task update, one statement; one grant names its task as a scalar.
const grant = (count: number) => `WITH granted AS (
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
    WHERE tasks.id = g.task_id AND ${count === 1 ? 'tasks.id = $3' : 'tasks.id = ANY ($3::text[])'}
    RETURNING ${TASK_COLUMNS},
      EXISTS (SELECT 1 FROM comments c WHERE c.task_id = tasks.id AND c.author_kind = 'human' AND c.deleted_at IS NULL) AS discussed`;
// The claim answer's discussion (src/operations/comments/discussion.ts), read only for the granted tasks a human
// has commented on (the grant's `discussed`) or with a change request: the latest live human comments of each, DISCUSSION_COMMENTS + 1 of them, as Kysely writes latestHumanComments (one placeholder per task).
// Its second query, the change requests, is sent only for tasks that have one: the benchmark's have none.
const latestHumanComments = (count: number) =>
  `select * from (select *, row_number() OVER (PARTITION BY task_id ORDER BY id DESC) as "rank" from "comments" where "task_id" in (${
    Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ')}) and "author_kind" = $${count + 1} and "deleted_at" is null) as "ranked" where "rank" <= $${count + 2} order by "id" desc`;
const DISCUSSION_COMMENTS = 5;
// appendEvents, as each transaction's last statement, as Baton's stored response does.
export const APPEND_EVENTS = `WITH ${APPENDING} SELECT 1`;
// lockLiveLease (src/store/leases.ts lockLeaseTask): lock the task and read its lease in one statement; read the
// lease again (findLease) only when the locked task no longer names it with the same expiry. Then updateTask.
const LEASE_FIELDS = ['id', 'task_id', 'holder_id', 'holder_kind', 'token_id', 'machine', 'epoch', 'ttl_s', 'state', 'acquired_at', 'renewed_at', 'expires_at',
  'warned_at', 'ended_at', 'created_at', 'created_by_id', 'created_by_kind'];
const LOCK_LEASE_TASK = `SELECT ${TASK_COLUMNS}, ${LEASE_FIELDS.map((f) => `leases.${f} AS lease__${f}`).join(', ')}
    FROM leases JOIN tasks ON tasks.id = leases.task_id WHERE leases.id = $1 AND tasks.deleted_at IS NULL FOR UPDATE OF tasks`;
const FIND_LEASE = `SELECT * FROM leases WHERE id = $1`;
// lockTask: a holder's complete locks its task before updateTask.
const LOCK_TASK = `SELECT ${TASK_COLUMNS} FROM tasks WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`;
// updateTask ending the lease in the same statement, as Baton sends it (the SET list follows the changes given).
const END_LEASE_MOVE_TASK = `WITH ended AS (UPDATE leases SET state = $1, ended_at = $2 WHERE id = $3) UPDATE tasks SET "status" = $4, "lease_id" = $5,
  "lease_holder_id" = $6, "lease_holder_kind" = $7, "lease_expires_at" = $8, "updated_at" = $9, "updated_by_id" = $10, "updated_by_kind" = $11,
  version = version + 1 WHERE id = $12 RETURNING ${TASK_COLUMNS}`;

// leases_release_many (src/operations/leases/release-leases.ts): find the leases, lock their tasks in id
// order, read the leases again, then one statement ends them all and requeues their tasks.
const FIND_LEASES = `SELECT l.* FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT * FROM leases WHERE leases.id = u.id OFFSET 0) AS l`;
const LOCK_TASK_IDS = `SELECT id FROM tasks WHERE id = ANY ($1::text[]) AND deleted_at IS NULL ORDER BY id FOR UPDATE`;
const REQUEUE_TASKS = `WITH ended AS (
      UPDATE leases SET state = 'released', ended_at = $2
      FROM (SELECT l.ctid AS row_id FROM unnest($1::text[]) AS u(id) CROSS JOIN LATERAL (SELECT ctid FROM leases WHERE leases.id = u.id OFFSET 0) AS l) AS held
      WHERE leases.ctid = held.row_id)
    UPDATE tasks SET status = 'todo', lease_id = NULL, lease_holder_id = NULL, lease_holder_kind = NULL, lease_expires_at = NULL,
      updated_at = $2, updated_by_id = $3, updated_by_kind = $4, version = version + 1
    WHERE id = ANY ($5::text[])
    RETURNING ${TASK_COLUMNS}`;

export interface RawClaim {
  task_id: string;
  lease_id: string;
  epoch: number;
}

interface TaskRow {
  id: string;
  lease_epoch: number;
}

interface LeaseRow {
  id: string;
  task_id: string;
  state: string;
  expires_at: Date;
}

/** LOCK_LEASE_TASK's row: the task's columns, and the lease's prefixed. */
interface LeaseTaskRow {
  lease_id: string | null;
  lease_expires_at: Date | null;
  lease__id: string;
  lease__task_id: string;
  lease__state: string;
  lease__expires_at: Date;
}

function event(type: string, subject: string, data: object, now: Date): object {
  return { id: ids.make('evt'), type, subject, actor_id: ACTOR.id, actor_kind: ACTOR.kind, token_id: ACTOR.token_id, machine: ACTOR.machine,
    idempotency_key: null, approval_id: null, data, created_at: now.toISOString() };
}

/**
 * Baton's per-request statements around the work: the token's grant lookup with its rate count
 * (on `counters`, a pool like Baton's `Database.counters`), the idempotency-key claim as the
 * transaction's first statement, and the stored response, carrying the events, as its last.
 */
export interface Overhead {
  counters: pg.Pool;
  /** The bearer token, and this request's Idempotency-Key. */
  token: string;
  key: string;
  /** The request's operation, for the stored response (Baton stores it with the key). */
  operation: string;
}

/** Baton's BATON_RATE_LIMIT window in the benchmarks (bench/databases.ts RATE_LIMIT), and its key TTL. */
const RATE_WINDOW_S = 60;
const KEY_TTL_MS = 24 * 3600 * 1000;

/** What a transaction's work answers: its result, and the events its last statement appends. */
type Work<T> = { value: T; events: object[] };

async function transaction<T>(pool: pg.Pool, run: (client: pg.PoolClient) => Promise<Work<T>>, overhead?: Overhead): Promise<T> {
  const principal = overhead ? await authenticate(overhead) : undefined;
  const client = await pool.connect();
  try {
    await client.query('begin');
    const now = new Date();
    if (overhead && principal) await client.query(prepared(CLAIM_KEY, [principal, overhead.key, principal, overhead.key, now]));
    const { value, events } = await run(client);
    if (overhead && principal) {
      const body = JSON.stringify(value ?? {});
      const print = createHash('sha256').update(`${overhead.operation}\n${body}`).digest();
      await client.query(prepared(STORE_RESPONSE_WITH_EVENTS, [EVENTS_CHANNEL, JSON.stringify(events), principal, overhead.key, print, overhead.operation, 200, body, now, new Date(now.getTime() + KEY_TTL_MS), now]));
    } else if (events.length > 0) {
      await client.query(prepared(APPEND_EVENTS, [EVENTS_CHANNEL, JSON.stringify(events)]));
    }
    await client.query('commit');
    return value;
  } catch (error) {
    await client.query('rollback').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The grant lookup that counts the request, as Baton's authenticate; answers the principal id. */
async function authenticate(overhead: Overhead): Promise<string> {
  const now = new Date();
  const windowStart = Math.floor(now.getTime() / (RATE_WINDOW_S * 1000)) * RATE_WINDOW_S;
  const [grant] = (await overhead.counters.query<{ agent_id: string; used: number | null }>(prepared(AUTHENTICATE, [hashToken(overhead.token), windowStart, now]))).rows;
  if (!grant || grant.used === null) throw new Error('the token was refused');
  return grant.agent_id;
}

/** Claims up to `limit` todo tasks, one lease each, with two events per task. Commits even when none was free. */
export function rawClaim(pool: pg.Pool, limit: number, overhead?: Overhead): Promise<RawClaim[]> {
  return transaction(pool, async (client) => {
    const now = new Date();
    const tasks = (await client.query<TaskRow>(prepared(limit === 1 ? PICK_ONE : PICK_MANY, limit === 1 ? [now, 0, ACTOR.id] : [now, 0, ACTOR.id, limit]))).rows;
    if (tasks.length === 0) return { value: [], events: [] };
    const expiresAt = new Date(now.getTime() + TTL_S * 1000);
    const grants = tasks.map((task) => ({ task_id: task.id, lease_id: ids.make('lea'), epoch: task.lease_epoch + 1 }));
    const leases = JSON.stringify(grants.map((g) => ({ id: g.lease_id, task_id: g.task_id, holder_id: ACTOR.id, holder_kind: ACTOR.kind, token_id: ACTOR.token_id,
      machine: ACTOR.machine, epoch: g.epoch, ttl_s: TTL_S, expires_at: expiresAt })));
    const taskIds = grants.map((g) => g.task_id);
    const granted = (await client.query<{ id: string; discussed: boolean; changes_requested_id: string | null }>(
      prepared(grant(grants.length), [now, leases, grants.length === 1 ? taskIds[0] : taskIds]),
    )).rows;
    const discussed = granted.filter((task) => task.discussed || task.changes_requested_id !== null).map((task) => task.id);
    if (discussed.length > 0) await client.query(prepared(latestHumanComments(discussed.length), [...discussed, 'human', DISCUSSION_COMMENTS + 1]));
    const events = grants.flatMap((g) => [
      event('task.claimed', g.task_id, { lease_id: g.lease_id, epoch: g.epoch, ttl_s: TTL_S, expires_at: expiresAt.toISOString() }, now),
      event('task.status_changed', g.task_id, { from: 'todo', to: 'in_progress' }, now),
    ]);
    return { value: grants, events };
  }, overhead);
}

/** Releases a live lease: the task goes back to todo. Throws if the lease is not active. */
export function rawRelease(pool: pg.Pool, leaseId: string, overhead?: Overhead): Promise<void> {
  return transaction(pool, async (client) => {
    const [row] = (await client.query<LeaseTaskRow>(prepared(LOCK_LEASE_TASK, [leaseId]))).rows;
    if (!row) throw new Error(`no lease ${leaseId}`);
    const now = new Date();
    const read: LeaseRow = { id: row.lease__id, task_id: row.lease__task_id, state: row.lease__state, expires_at: row.lease__expires_at };
    // As leaseIsCurrent: a task naming this live lease with the same expiry means the lease has not moved.
    const current = read.state === 'active' && row.lease_id === read.id && row.lease_expires_at?.getTime() === read.expires_at.getTime();
    const lease = current ? read : (await client.query<LeaseRow>(prepared(FIND_LEASE, [leaseId]))).rows[0];
    if (lease?.state !== 'active' || lease.expires_at <= now) throw new Error(`lease ${leaseId} is not live`);
    await client.query(prepared(END_LEASE_MOVE_TASK, ['released', now, leaseId, 'todo', null, null, null, null, now, ACTOR.id, ACTOR.kind, lease.task_id]));
    const events = [
      event('lease.released', lease.task_id, { lease_id: leaseId }, now),
      event('task.status_changed', lease.task_id, { from: 'in_progress', to: 'todo', reason: 'released' }, now),
    ];
    return { value: undefined, events };
  }, overhead);
}

/** Releases several live leases in one transaction, all or none: their tasks go back to todo. */
export function rawReleaseMany(pool: pg.Pool, leaseIds: readonly string[], overhead?: Overhead): Promise<void> {
  return transaction(pool, async (client) => {
    const now = new Date();
    const found = (await client.query<LeaseRow>(prepared(FIND_LEASES, [leaseIds]))).rows;
    if (found.length !== leaseIds.length) throw new Error(`not every lease of ${leaseIds.join(', ')} exists`);
    await client.query(prepared(LOCK_TASK_IDS, [[...new Set(found.map((l) => l.task_id))]]));
    const leases = new Map((await client.query<LeaseRow>(prepared(FIND_LEASES, [leaseIds]))).rows.map((l) => [l.id, l]));
    const held = leaseIds.map((id) => {
      const lease = leases.get(id);
      if (lease?.state !== 'active' || lease.expires_at <= now) throw new Error(`lease ${id} is not live`);
      return lease;
    });
    await client.query(prepared(REQUEUE_TASKS, [leaseIds, now, ACTOR.id, ACTOR.kind, held.map((l) => l.task_id)]));
    const events = held.flatMap((lease) => [
      event('lease.released', lease.task_id, { lease_id: lease.id }, now),
      event('task.status_changed', lease.task_id, { from: 'in_progress', to: 'todo', reason: 'released' }, now),
    ]);
    return { value: undefined, events };
  }, overhead);
}

/**
 * Completes claimed work as a holder's `PATCH /tasks/{id} {status: in_review, lease_epoch}` does
 * (src/operations/tasks/update-task.ts): lock the task, check the epoch, end the lease, move the
 * task to in_review. Throws if the task is no longer held at that epoch.
 */
export function rawComplete(pool: pg.Pool, claim: RawClaim, overhead?: Overhead): Promise<void> {
  return transaction(pool, async (client) => {
    const now = new Date();
    const [task] = (await client.query<TaskRow & { status: string; lease_id: string | null }>(prepared(LOCK_TASK, [claim.task_id]))).rows;
    if (task?.status !== 'in_progress' || task.lease_epoch !== claim.epoch || !task.lease_id) throw new Error(`task ${claim.task_id} is not held at epoch ${claim.epoch}`);
    await client.query(prepared(END_LEASE_MOVE_TASK, ['ended', now, task.lease_id, 'in_review', null, null, null, null, now, ACTOR.id, ACTOR.kind, claim.task_id]));
    const events = [
      event('lease.released', claim.task_id, { lease_id: task.lease_id, reason: 'status_changed', to: 'in_review' }, now),
      event('task.status_changed', claim.task_id, { from: 'in_progress', to: 'in_review' }, now),
    ];
    return { value: undefined, events };
  }, overhead);
}

/**
 * Task text for a seed: `BENCH_DESCRIPTION_BYTES` (default 0, an empty description) sets about how long
 * each seeded description is. Real tasks carry one (an agent's task is often a prompt of a few KB),
 * and its search document is kept up to date on every write that changes it.
 */
export function descriptionBytes(): number {
  const bytes = Number(process.env.BENCH_DESCRIPTION_BYTES ?? 0);
  if (!(Number.isInteger(bytes) && bytes >= 0)) throw new Error(`BENCH_DESCRIPTION_BYTES must be a whole number of bytes (got ${process.env.BENCH_DESCRIPTION_BYTES})`);
  return bytes;
}

/**
 * Inserts `count` todo tasks at normal priority straight into a migrated database, each with a
 * description of about `descriptionBytes()` bytes: one of 1,000 texts of made-up words (3 to 8
 * letters, about 7 bytes a word with its space), so the search documents differ from task to task.
 */
export async function seedTodoTasks(url: string, count: number): Promise<void> {
  const words = Math.round(descriptionBytes() / 7);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(prepared(
      `WITH texts AS (
         SELECT t, string_agg(substr(md5(t::text || '-' || w::text), 1, 3 + w % 6), ' ') AS description
         FROM generate_series(0, 999) AS t, generate_series(1, $2) AS w GROUP BY t
       )
       INSERT INTO tasks (id, title, description, status, priority, labels, created_at, created_by_id, created_by_kind, updated_at, updated_by_id, updated_by_kind)
       SELECT 'tsk_' || lpad(g::text, 26, '0'), 'Bench task ' || g, COALESCE(texts.description, ''), 'todo', 1, '{bench}', now(), 'agt_bench_seed', 'system', now(), 'agt_bench_seed', 'system'
       FROM generate_series(1, $1) AS g LEFT JOIN texts ON texts.t = g % 1000`,
      [count, words],
    ));
    await client.query('ANALYZE tasks');
  } finally {
    await client.end();
  }
}
