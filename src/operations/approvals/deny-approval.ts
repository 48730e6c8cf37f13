import { z } from 'zod';
import { decideApproval } from '../../store/approvals.ts';
import { defineOperation } from '../define-operation.ts';
import { approvalId, approvalOutput, toApproval } from './approval-schema.ts';
import { lockPending } from './decide.ts';
import { closeInboxItems } from '../../store/inbox.ts';

export const denyApproval = defineOperation({
  name: 'approvals_deny',
  summary: 'Deny a pending request: its operation never runs; the decision is recorded.',
  kind: 'write',
  scope: 'approvals:decide',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/approvals/{id}/deny' },
  input: z.strictObject({ id: approvalId, reason: z.string().trim().min(1).max(500).optional().describe('Why, for the requester.') }),
  output: approvalOutput,
  async run(tx, ctx, input) {
    const row = await lockPending(tx, ctx, input.id);
    await closeInboxItems(tx, row.id, 'approval', ctx.now);
    const decided = await decideApproval(tx, row.id, {
      status: 'denied',
      decided_by_id: ctx.actor.id,
      decided_by_kind: ctx.actor.kind,
      decided_at: ctx.now,
      reason: input.reason ?? null,
      result_status: null,
      result_body: null,
    });
    ctx.emit({ type: 'approval.denied', subject: row.id, data: { operation: row.operation, reason: input.reason ?? null }, approvalId: row.id });
    return toApproval(decided, ctx.now);
  },
});
