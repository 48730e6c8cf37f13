import { BatonError } from '../../errors.ts';
import type { LeaseRow } from '../../store/leases.ts';
import { addUsage, findRunUsage, type RunUsageRow } from '../../store/runs.ts';
import type { Tx } from '../../store/connection.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { lockLiveLease } from '../leases/held-lease.ts';
import { leaseId } from '../leases/lease-schema.ts';
import { runOutput, toIncrement, toRun, type UsageInput, usageInput } from './run-schema.ts';

export const reportUsage = defineOperation({
  name: 'runs_usage',
  summary: 'Report what your run used since the last report (tokens, cost, tool calls); it is added to the run.',
  description: 'Or send the same as `usage` on leases_heartbeat. A replay with the same Idempotency-Key is not counted again.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/usage' },
  input: usageInput.extend({ id: leaseId }),
  output: runOutput,
  async run(tx, ctx, input) {
    const { lease } = await lockLiveLease(tx, input.id, ctx.actor, ctx, false);
    const usage = await addReportedUsage(tx, ctx, lease, input);
    return toRun(lease, usage, ctx.now);
  },
});

/**
 * Adds a report to the live lease's run (its task locked by the caller). A run counts in one
 * currency: a report in another is refused, as nothing could add the two.
 */
export async function addReportedUsage(tx: Tx, ctx: OperationContext, lease: LeaseRow, input: UsageInput): Promise<RunUsageRow> {
  const increment = toIncrement(input);
  if (increment.currency !== undefined) {
    const before = await findRunUsage(tx, lease.id);
    if (before?.currency && before.currency !== increment.currency) {
      throw new BatonError('conflict_state', `Run ${lease.id} counts its cost in ${before.currency}, not ${increment.currency}.`, {
        hint: `Report this run's cost in ${before.currency}.`,
      });
    }
  }
  return addUsage(tx, lease.id, increment, ctx.now);
}
