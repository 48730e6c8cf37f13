import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findApproval } from '../../store/approvals.ts';
import { defineOperation } from '../define-operation.ts';
import { approvalId, approvalOutput, toApproval } from './approval-schema.ts';

export function approvalNotFound(id: string): BatonError {
  return new BatonError('not_found', `No approval ${id}.`, { hint: '[[approvals_list]] lists the approvals you can see.' });
}

export const getApproval = defineOperation({
  name: 'approvals_get',
  summary: 'Read one approval: what will run, who asked, the decision and the result.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/approvals/{id}' },
  input: z.strictObject({ id: approvalId }),
  output: approvalOutput,
  async run(db, ctx, input) {
    const row = await findApproval(db, input.id);
    // Another agent's request is answered as absent, so ids cannot be probed.
    if (!row || (ctx.actor.kind !== 'human' && row.requested_by_id !== ctx.actor.id)) throw approvalNotFound(input.id);
    const approval = toApproval(row, ctx.now);
    // A secret the approved call made (a webhook's) is never stored; its requester alone reads it here, computed afresh.
    const operation = ctx.operations.find((op) => op.name === row.operation);
    if (approval.status === 'approved' && approval.result && row.requested_by_id === ctx.actor.id && operation?.revealToRequester) {
      return { ...approval, result: { ...approval.result, body: await operation.revealToRequester(db, ctx, approval.result.body) } };
    }
    return approval;
  },
});
