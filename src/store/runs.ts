import { type Kysely, type Selectable, sql } from 'kysely';
import type { DB, RunLogLevel, RunLogTable, RunsTable } from './schema.ts';
import type { LeaseRow } from './leases.ts';
import type { Tx } from './connection.ts';

export type RunUsageRow = Selectable<RunsTable>;
export type RunLogRow = Selectable<RunLogTable>;

/** A run as read: its lease, and what was reported on it (null before the first report). */
export interface RunRow {
  lease: LeaseRow;
  usage: RunUsageRow | undefined;
}

/** One report's increments; `currency` and `model` are set by the first report that names them. */
export interface UsageIncrement {
  input_tokens: number;
  output_tokens: number;
  cost_micros: number;
  tool_calls: number;
  currency: string | undefined;
  model: string | undefined;
}

export async function findRunUsage(db: Kysely<DB>, leaseId: string): Promise<RunUsageRow | undefined> {
  return db.selectFrom('runs').selectAll().where('lease_id', '=', leaseId).executeTakeFirst();
}

/**
 * Records why a run failed, making its row if no report did: a statement of its own after the one
 * that ended the lease (its trigger reads the ended lease). The caller holds the task's lock.
 */
export async function recordRunFailure(tx: Tx, leaseId: string, code: string, now: Date): Promise<void> {
  await tx
    .insertInto('runs')
    .values({ lease_id: leaseId, input_tokens: 0, output_tokens: 0, cost_micros: 0, tool_calls: 0, currency: null, model: null, failure_code: code, updated_at: now })
    .onConflict((oc) => oc.column('lease_id').doUpdateSet({ failure_code: code }))
    .execute();
}

/**
 * Adds one report to a run's totals, making its row on the first. The caller holds the lease's task
 * lock, so reports on one run are applied one at a time.
 */
export async function addUsage(tx: Tx, leaseId: string, u: UsageIncrement, now: Date): Promise<RunUsageRow> {
  return tx
    .insertInto('runs')
    .values({
      lease_id: leaseId,
      input_tokens: u.input_tokens,
      output_tokens: u.output_tokens,
      cost_micros: u.cost_micros,
      tool_calls: u.tool_calls,
      currency: u.currency ?? null,
      model: u.model ?? null,
      reports: 1,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.column('lease_id').doUpdateSet({
        input_tokens: sql`runs.input_tokens + excluded.input_tokens`,
        output_tokens: sql`runs.output_tokens + excluded.output_tokens`,
        cost_micros: sql`runs.cost_micros + excluded.cost_micros`,
        tool_calls: sql`runs.tool_calls + excluded.tool_calls`,
        currency: sql`coalesce(runs.currency, excluded.currency)`,
        model: sql`coalesce(excluded.model, runs.model)`,
        reports: sql`runs.reports + 1`,
        updated_at: now,
      }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
}

/**
 * Appends lines to a run's log, numbered after those it has; the caller checked the bound against
 * `had` under the lease's task lock. Makes the run's row if no report did yet.
 */
export async function appendRunLog(tx: Tx, leaseId: string, entry: { lines: readonly string[]; level: RunLogLevel; had: number }, now: Date): Promise<void> {
  await tx
    .insertInto('runs')
    .values({ lease_id: leaseId, input_tokens: 0, output_tokens: 0, cost_micros: 0, tool_calls: 0, currency: null, model: null, log_lines: entry.had + entry.lines.length, updated_at: now })
    .onConflict((oc) => oc.column('lease_id').doUpdateSet({ log_lines: entry.had + entry.lines.length, updated_at: now }))
    .execute();
  await tx
    .insertInto('run_log')
    .values(entry.lines.map((line, i) => ({ lease_id: leaseId, seq: entry.had + i + 1, at: now, level: entry.level, line })))
    .execute();
}

/** The last `count` lines of a run's log, oldest first. */
export async function runLogTail(db: Kysely<DB>, leaseId: string, count: number): Promise<RunLogRow[]> {
  if (count === 0) return [];
  const rows = await db.selectFrom('run_log').selectAll().where('lease_id', '=', leaseId).orderBy('seq', 'desc').limit(count).execute();
  return rows.reverse();
}

export interface RunQuery {
  taskId: string | undefined;
  holderId: string | undefined;
  /** Runs granted in [from, to). */
  from: Date | undefined;
  to: Date | undefined;
  /** The last lease id of the previous page: newest first, so the next page's are below it. */
  beforeId: string | undefined;
  limit: number;
}

/** Runs newest first (lease ids are ULIDs, in grant order), each with its usage; one more than `limit`, to tell a further page. */
export async function listRuns(db: Kysely<DB>, q: RunQuery): Promise<RunRow[]> {
  let query = db.selectFrom('leases').selectAll('leases');
  if (q.taskId) query = query.where('leases.task_id', '=', q.taskId);
  if (q.holderId) query = query.where('leases.holder_id', '=', q.holderId);
  if (q.from) query = query.where('leases.acquired_at', '>=', q.from);
  if (q.to) query = query.where('leases.acquired_at', '<', q.to);
  if (q.beforeId) query = query.where('leases.id', '<', q.beforeId);
  const leases = await query.orderBy('leases.id', 'desc').limit(q.limit + 1).execute();
  if (leases.length === 0) return [];
  const usage = await db
    .selectFrom('runs')
    .selectAll()
    .where(
      'lease_id',
      'in',
      leases.map((l) => l.id),
    )
    .execute();
  const byLease = new Map(usage.map((u) => [u.lease_id, u]));
  return leases.map((lease) => ({ lease, usage: byLease.get(lease.id) }));
}

export interface RunWindowQuery {
  /** Runs granted in [from, to). */
  from: Date;
  to: Date;
  /** The last lease id of the previous page: oldest first, so the next page's are above it. */
  afterId: string | undefined;
  /** Only runs with at least one usage report. */
  reported: boolean;
  limit: number;
}

/**
 * Runs granted in a window, oldest first (lease ids are ULIDs, in grant order), each with its usage;
 * one more than `limit`, to tell a further page. A keyset read on the lease key, so an export pages
 * through any number of runs holding one page.
 */
export async function listRunsInWindow(db: Kysely<DB>, q: RunWindowQuery): Promise<RunRow[]> {
  let query = db.selectFrom('leases').selectAll('leases').where('leases.acquired_at', '>=', q.from).where('leases.acquired_at', '<', q.to);
  if (q.afterId) query = query.where('leases.id', '>', q.afterId);
  if (q.reported) query = query.where((eb) => eb.exists(eb.selectFrom('runs').select('runs.lease_id').whereRef('runs.lease_id', '=', 'leases.id').where('runs.reports', '>', 0)));
  const leases = await query.orderBy('leases.id').limit(q.limit + 1).execute();
  if (leases.length === 0) return [];
  const usage = await db.selectFrom('runs').selectAll().where('lease_id', 'in', leases.map((l) => l.id)).execute();
  const byLease = new Map(usage.map((u) => [u.lease_id, u]));
  return leases.map((lease) => ({ lease, usage: byLease.get(lease.id) }));
}
