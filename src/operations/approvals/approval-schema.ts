import { z } from 'zod';
import { APPROVAL_STATUSES } from '../../domain/approval-status.ts';
import { idPattern } from '../../ids.ts';
import type { ApprovalRow } from '../../store/approvals.ts';
import { actorRef, holderRef } from '../tasks/task-schema.ts';

export const approvalId = z.string().regex(new RegExp(idPattern('apr')), 'must be an approval id: apr_ followed by a 26-character ULID');

export const approvalOutput = z.object({
  id: z.string(),
  status: z.enum(APPROVAL_STATUSES).describe('`pending` until a human decides; `expired` if nobody did in time; `failed` if it was approved but the operation then failed.'),
  operation: z.string().describe('The operation that will run (or ran) on approval.'),
  input: z.record(z.string(), z.unknown()).describe('Exactly what it runs with.'),
  target: z.object({ id: z.string(), version: z.int() }).nullable().describe('The resource it acts on, at the version seen when requested; approving after it changed is 409 approval_stale.'),
  requested_by: holderRef,
  requested_machine: z.string().describe("The machine label of the requester's token: which of its machines asked."),
  decided_by: actorRef.nullable(),
  decided_at: z.iso.datetime().nullable(),
  reason: z.string().nullable(),
  result: z
    .object({ status: z.int(), body: z.unknown() })
    .nullable()
    .describe("The operation's own response once it ran (a problem document if it failed)."),
  expires_at: z.iso.datetime(),
  created_at: z.iso.datetime(),
  overdue_at: z.iso.datetime().optional().describe('When it went past its SLA (escalated); absent before.'),
});
export type Approval = z.infer<typeof approvalOutput>;

export function toApproval(row: ApprovalRow, now: Date): Approval {
  const expired = row.status === 'pending' && row.expires_at <= now;
  return {
    id: row.id,
    status: expired ? 'expired' : row.status,
    operation: row.operation,
    input: row.input as Record<string, unknown>,
    target: row.target_id !== null && row.target_version !== null ? { id: row.target_id, version: row.target_version } : null,
    requested_by: { id: row.requested_by_id, kind: row.requested_by_kind },
    requested_machine: row.requested_machine,
    decided_by: row.decided_by_id && row.decided_by_kind ? { id: row.decided_by_id, kind: row.decided_by_kind as 'human' } : null,
    decided_at: row.decided_at?.toISOString() ?? null,
    reason: row.reason,
    result: row.result_status !== null && row.result_body !== null ? { status: row.result_status, body: JSON.parse(row.result_body) as unknown } : null,
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
    ...(row.overdue_at ? { overdue_at: row.overdue_at.toISOString() } : {}),
  };
}
