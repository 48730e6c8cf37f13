import { BatonError } from '../../errors.ts';
import type { Operation } from '../define-operation.ts';
import { operationKey } from '../authorization.ts';

/** Refuses allowlist entries that name no operation: a typo would otherwise lock an agent out silently. */
export function checkAllowlist(names: readonly string[] | null | undefined, operations: readonly Operation[]): void {
  if (!names) return;
  const known = new Set(operations.map((op) => operationKey(op.name)));
  const unknown = names.filter((n) => !known.has(operationKey(n)));
  if (unknown.length === 0) return;
  throw new BatonError('validation_failed', `tool_allowlist names unknown operations: ${unknown.join(', ')}.`, {
    hint: 'Use operation names from the manifest (GET /api/v1), e.g. tasks_claim_next.',
    extra: { errors: unknown.map((n) => ({ pointer: `/tool_allowlist/${names.indexOf(n)}`, detail: 'no such operation', location: 'body' })) },
  });
}
