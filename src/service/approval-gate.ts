import type { z } from 'zod';
import type { Principal } from '../domain/principal.ts';
import type { Ids } from '../ids.ts';
import type { EventDraft, Operation } from '../operations/define-operation.ts';
import { toApproval } from '../operations/approvals/approval-schema.ts';
import { assertVersion } from '../operations/shared/versions.ts';
import { humansWithScope } from '../store/agents.ts';
import { insertApproval } from '../store/approvals.ts';
import type { Tx } from '../store/connection.ts';
import type { NewEventRow } from '../store/events.ts';
import { type NewStoredResponse, storeResponse } from '../store/idempotency.ts';
import { insertInboxItems } from '../store/inbox.ts';
import { eventRow } from './event-rows.ts';

const APPROVAL_TTL_MS = 24 * 3600 * 1000;

/** A human who may decide approvals needs none for their own requests: their call is the decision. */
export function decidesOwnApprovals(principal: Principal): boolean {
  return principal.kind === 'human' && principal.scopes.has('approvals:decide');
}

/** A write the gate holds: what was asked, by whom, under which key. */
export interface GatedWrite {
  readonly operation: Operation & { kind: 'write' };
  readonly input: z.output<z.ZodObject>;
  readonly principal: Principal;
  /** If-Match: the version of the target the caller saw. */
  readonly expectedVersion: number | undefined;
  readonly key: string;
  readonly print: Buffer;
  readonly now: Date;
  readonly keyRow: Omit<NewStoredResponse, 'status_code' | 'response_body'>;
}

/**
 * The approval gate: instead of running, records the exact request (bound to the target's current
 * version) as a pending approval, with its event, in the inbox of everyone who may decide it, and
 * stores the 202 answer under the key. Returns the approval's id, the answer and the event; or
 * undefined when a duplicate took the key first (the caller rolls back and runs again). A human runs
 * the request by approving.
 */
export async function requestApproval(ids: Ids, tx: Tx, write: GatedWrite): Promise<{ id: string; body: string; events: NewEventRow[] } | undefined> {
  const { operation, principal, now } = write;
  const target = operation.approvalTarget ? await operation.approvalTarget(tx, write.input, principal) : undefined;
  // If-Match binds now: an approval must not be made for a version the caller has not seen.
  if (target) assertVersion(target.id, target.version, write.expectedVersion);
  const row = await insertApproval(tx, {
    id: ids.make('apr'),
    operation: operation.name,
    input: write.input,
    fingerprint: write.print,
    target_id: target?.id ?? null,
    target_version: target?.version ?? null,
    status: 'pending',
    requested_by_id: principal.id,
    requested_by_kind: principal.kind,
    requested_token_id: principal.tokenId,
    requested_machine: principal.machine,
    requested_scopes: [...principal.scopes],
    idempotency_key: write.key,
    expires_at: new Date(now.getTime() + APPROVAL_TTL_MS),
    created_at: now,
    created_by_id: principal.id,
    created_by_kind: principal.kind,
  });
  // An approval of a task's operation waits in the inbox of everyone who may decide it (emailed at once).
  const taskId = row.target_id?.startsWith('tsk_') ? row.target_id : null;
  if (taskId) {
    const deciders = await humansWithScope(tx, 'approvals:decide', principal.id);
    await insertInboxItems(
      tx,
      deciders.map((decider) => ({ id: ids.make('inb'), principal_id: decider, kind: 'approval' as const, task_id: taskId, ref_id: row.id, by_id: principal.id, excerpt: `Approve ${operation.name}?`, created_at: now })),
    );
  }
  const body = JSON.stringify(toApproval(row, now));
  const draft: EventDraft = {
    type: 'approval.requested',
    subject: row.id,
    data: { operation: operation.name, approval_class: operation.approval, target_id: row.target_id },
    approvalId: row.id,
  };
  const events = [eventRow(ids, draft, principal, write.key, now)];
  if (!(await storeResponse(tx, { ...write.keyRow, status_code: 202, response_body: body }, events))) return undefined;
  return { id: row.id, body, events };
}
