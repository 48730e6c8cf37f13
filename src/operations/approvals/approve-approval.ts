import { sql } from 'kysely';
import { z } from 'zod';
import { BatonError, OPERATION_NAMES, toBatonError, toProblem } from '../../errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { type ApprovalRow, decideApproval } from '../../store/approvals.ts';
import { findGrantById } from '../../store/tokens.ts';
import { mayCall } from '../authorization.ts';
import { principalFromGrant } from '../shared/grants.ts';
import { defineOperation, type EventDraft, type Operation, type OperationContext } from '../define-operation.ts';
import { approvalId, approvalOutput, toApproval } from './approval-schema.ts';
import { lockPending } from './decide.ts';
import { closeInboxItems } from '../../store/inbox.ts';
import type { Tx } from '../../store/connection.ts';

export const approveApproval = defineOperation({
  name: 'approvals_approve',
  summary: 'Approve a pending request: its operation runs now, exactly once, as the requester; the result is on the approval.',
  description: 'Humans only. If the target changed since the request, approving is 409 approval_stale: deny it instead.',
  kind: 'write',
  scope: 'approvals:decide',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/approvals/{id}/approve' },
  input: z.strictObject({ id: approvalId, reason: z.string().trim().min(1).max(500).optional() }),
  output: approvalOutput,
  async run(tx, ctx, input) {
    const row = await lockPending(tx, ctx, input.id);
    const operation = ctx.operations.find((op) => op.name === row.operation);
    if (!operation || operation.kind !== 'write') throw new Error(`approval ${row.id} names unknown operation ${row.operation}`);
    if (operation.approvalTarget && row.target_id !== null) {
      const current = await operation.approvalTarget(tx, row.input as never).catch(() => undefined);
      if (!current || current.version !== row.target_version) {
        throw new BatonError('approval_stale', `${row.target_id} is ${current ? `at version ${current.version}` : 'gone'}; the request was made at version ${row.target_version}.`, {
          extra: { target_id: row.target_id, requested_version: row.target_version, current_version: current?.version ?? null },
        });
      }
    }
    // A savepoint: if the operation fails, its writes are undone but the failed decision is kept.
    await sql`SAVEPOINT approved_operation`.execute(tx);
    const drafts: EventDraft[] = [];
    let result: { status: number; body: unknown; ok: boolean };
    try {
      const requester = await currentRequester(tx, ctx, row, operation);
      const output = await operation.run(tx, requesterContext(ctx, requester, row, drafts), row.input as never);
      // A secret shown once (a webhook's) is never stored, not even in the approval's result.
      result = { status: operation.http.successStatus ?? 200, body: operation.redactForReplay ? operation.redactForReplay(output) : output, ok: true };
    } catch (error) {
      await sql`ROLLBACK TO SAVEPOINT approved_operation`.execute(tx);
      const failure = toBatonError(error);
      result = { status: failure.status, body: toProblem(failure, ctx.config.publicUrl, OPERATION_NAMES), ok: false };
      drafts.length = 0;
    }
    await closeInboxItems(tx, row.id, 'approval', ctx.now);
    const decided = await decideApproval(tx, row.id, {
      status: result.ok ? 'approved' : 'failed',
      decided_by_id: ctx.actor.id,
      decided_by_kind: ctx.actor.kind,
      decided_at: ctx.now,
      reason: input.reason ?? null,
      result_status: result.status,
      result_body: JSON.stringify(result.body),
    });
    ctx.emit({ type: 'approval.granted', subject: row.id, data: { operation: row.operation, outcome: result.ok ? 'ran' : 'failed', result_status: result.status }, approvalId: row.id });
    for (const draft of drafts) ctx.emit(draft);
    return toApproval(decided, ctx.now);
  },
});

/**
 * The requester as they stand now: the operation runs only if their token is still good and
 * still allows it (a revoked token, disabled agent or narrowed scope fails the approval).
 */
async function currentRequester(tx: Tx, ctx: OperationContext, row: ApprovalRow, operation: Operation): Promise<Principal> {
  const requester = principalFromGrant(await findGrantById(tx, row.requested_token_id), ctx.now);
  if (!mayCall(requester, operation.name, operation.scope)) {
    throw new BatonError('forbidden_scope', `${requester.id} may no longer call ${operation.name}; the approval cannot run it.`, {
      extra: { required_scope: operation.scope },
    });
  }
  return requester;
}

/** The approved operation runs as the requester, its events attributed to them under the approval. */
function requesterContext(ctx: OperationContext, requester: Principal, row: ApprovalRow, drafts: EventDraft[]): OperationContext {
  return {
    ...ctx,
    // The approver's own time: the approval row is locked, and the operation runs within its decision.
    now: ctx.now,
    actor: requester,
    expectedVersion: undefined,
    emit: (event) => drafts.push({ ...event, by: event.by ?? requester, approvalId: row.id }),
  };
}

