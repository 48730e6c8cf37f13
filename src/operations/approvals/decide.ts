import { BatonError } from '../../errors.ts';
import { type ApprovalRow, lockApproval } from '../../store/approvals.ts';
import type { OperationContext } from '../define-operation.ts';
import { approvalNotFound } from './get-approval.ts';
import type { Tx } from '../../store/connection.ts';

/** Locks a pending, unexpired approval for a human decision; agents never decide, not even their own. */
export async function lockPending(tx: Tx, ctx: OperationContext, id: string): Promise<ApprovalRow> {
  if (ctx.actor.kind !== 'human') {
    throw new BatonError('human_required', `Only a human may decide approval ${id}; agents never approve, not even their own requests.`);
  }
  const row = await lockApproval(tx, id);
  if (!row) throw approvalNotFound(id);
  if (row.status !== 'pending') {
    throw new BatonError('approval_not_pending', `Approval ${id} was already ${row.status}${row.decided_at ? ` at ${row.decided_at.toISOString()}` : ''}.`, {
      extra: { approval_status: row.status },
    });
  }
  if (row.expires_at <= ctx.now) {
    throw new BatonError('approval_not_pending', `Approval ${id} expired at ${row.expires_at.toISOString()} without a decision.`, { extra: { approval_status: 'expired' } });
  }
  return row;
}
