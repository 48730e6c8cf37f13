import { z } from 'zod';
import { listApprovals as listApprovalRows } from '../../store/approvals.ts';
import { latestEventId } from '../../store/events.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { APPROVAL_STATUSES } from '../../domain/approval-status.ts';
import { approvalOutput, toApproval } from './approval-schema.ts';

export const listApprovals = defineOperation({
  name: 'approvals_list',
  summary: 'List approvals, newest first: `status=pending` is the inbox of requests waiting for a human.',
  description: 'Agents see only the approvals they requested; humans see all.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/approvals' },
  input: z.strictObject({ status: z.enum(APPROVAL_STATUSES).optional(), cursor: cursorParam, limit: limitParam }),
  output: pageSchema(approvalOutput),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('approvals', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listApprovalRows(db, {
      status: input.status,
      requestedBy: ctx.actor.kind === 'human' ? undefined : ctx.actor.id,
      now: ctx.now,
      beforeId,
      limit: input.limit,
    });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('approvals', row.id));
    return { data: page.rows.map((row) => toApproval(row, ctx.now)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
