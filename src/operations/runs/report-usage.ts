import { BatonError } from '../../errors.ts';
import type { LeaseRow } from '../../store/leases.ts';
import type { TaskRow } from '../../store/tasks.ts';
import type { Spending } from '../budgets/budget-schema.ts';
import { chargeBudgets } from '../budgets/budget-spend.ts';
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
    const { lease, task } = await lockLiveLease(tx, input.id, ctx.actor, ctx, false);
    const { usage } = await addReportedUsage(tx, ctx, { lease, task }, input);
    return toRun(lease, usage, ctx.now);
  },
});

/**
 * Adds a report to the live lease's run (its task locked by the caller), and to the budgets the run
 * spends from (spec/runs.md, "Budgets"), in this transaction: a replay of the report, answered from
 * its stored response, adds to neither. A run counts in one currency: a report in another is
 * refused, as nothing could add the two. Returns the run's usage and its budgets after the report.
 */
export async function addReportedUsage(tx: Tx, ctx: OperationContext, held: { lease: LeaseRow; task: TaskRow }, input: UsageInput): Promise<{ usage: RunUsageRow; budgets: Spending[] }> {
  const { lease, task } = held;
  const increment = toIncrement(input);
  if (increment.currency !== undefined) {
    const before = await findRunUsage(tx, lease.id);
    if (before?.currency && before.currency !== increment.currency) {
      throw new BatonError('conflict_state', `Run ${lease.id} counts its cost in ${before.currency}, not ${increment.currency}.`, {
        hint: `Report this run's cost in ${before.currency}.`,
      });
    }
  }
  const usage = await addUsage(tx, lease.id, increment, ctx.now);
  const spend = { costMicros: increment.cost_micros, currency: increment.currency, tokens: increment.input_tokens + increment.output_tokens, runs: 0 };
  const budgets = await chargeBudgets(tx, ctx, { agentId: lease.holder_id, labels: task.labels, taskId: task.id, workspaceId: ctx.actor.workspaceId }, spend);
  return { usage, budgets };
}
