import type { Kysely, Selectable } from 'kysely';
import type { ApprovalsTable, DB } from './schema.ts';
import type { Tx } from './connection.ts';

export type ApprovalRow = Selectable<ApprovalsTable>;
export type NewApprovalRow = Omit<ApprovalRow, 'decided_by_id' | 'decided_by_kind' | 'decided_at' | 'reason' | 'result_status' | 'result_body' | 'overdue_at'>;

export async function insertApproval(tx: Tx, row: NewApprovalRow): Promise<ApprovalRow> {
  return tx
    .insertInto('approvals')
    .values({ ...row, input: JSON.stringify(row.input) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findApproval(db: Kysely<DB>, id: string): Promise<ApprovalRow | undefined> {
  return db.selectFrom('approvals').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Locks the approval: two concurrent decisions serialize here, so the operation runs once. */
export async function lockApproval(tx: Tx, id: string): Promise<ApprovalRow | undefined> {
  return tx.selectFrom('approvals').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export interface Decision {
  status: 'approved' | 'denied' | 'failed';
  decided_by_id: string;
  decided_by_kind: string;
  decided_at: Date;
  reason: string | null;
  result_status: number | null;
  result_body: string | null;
}

export async function decideApproval(tx: Tx, id: string, decision: Decision): Promise<ApprovalRow> {
  return tx.updateTable('approvals').set(decision).where('id', '=', id).returningAll().executeTakeFirstOrThrow();
}

export interface ApprovalListQuery {
  /** `pending` means undecided and not yet expired; `expired`, undecided past its expiry. */
  status: 'pending' | 'approved' | 'denied' | 'failed' | 'expired' | undefined;
  requestedBy: string | undefined;
  now: Date;
  beforeId: string | undefined;
  limit: number;
}

export async function listApprovals(db: Kysely<DB>, q: ApprovalListQuery): Promise<ApprovalRow[]> {
  let query = db.selectFrom('approvals').selectAll();
  if (q.status === 'pending') query = query.where('status', '=', 'pending').where('expires_at', '>', q.now);
  else if (q.status === 'expired') query = query.where('status', '=', 'pending').where('expires_at', '<=', q.now);
  else if (q.status) query = query.where('status', '=', q.status);
  if (q.requestedBy) query = query.where('requested_by_id', '=', q.requestedBy);
  if (q.beforeId) query = query.where('id', '<', q.beforeId);
  return query.orderBy('id', 'desc').limit(q.limit + 1).execute();
}
