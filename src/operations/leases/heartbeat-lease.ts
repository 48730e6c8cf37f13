import { z } from 'zod';
import { renewLease } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { resolveTtl, ttlParam } from './grant.ts';
import { lockLiveLease } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';
import { nextAction } from '../tasks/task-schema.ts';
import { nextActions } from '../tasks/task-view.ts';
import { addReportedUsage } from '../runs/report-usage.ts';
import { usageInput } from '../runs/run-schema.ts';
import { budgetsFor } from '../../store/budgets.ts';
import { exhaustedOf } from '../budgets/budget-spend.ts';
import { budgetSummary, heartbeatBudget, spendingOf } from '../budgets/budget-schema.ts';

export const heartbeatLease = defineOperation({
  name: 'leases_heartbeat',
  summary: 'Keep your lease alive: its expiry moves to now + TTL. May carry a short progress note for humans.',
  description: 'Send one every `heartbeat_interval_s`. A lease that already ran out cannot be revived: 409 lease_expired.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/heartbeat' },
  input: z.strictObject({
    id: leaseId,
    note: z.string().trim().min(1).max(500, 'notes are limited to 500 characters').optional().describe('Progress, as one line a human can read in the timeline.'),
    ttl_s: ttlParam,
    usage: usageInput.optional().describe('Usage since your last report, as runs_usage takes it.'),
  }),
  output: leaseOutput.extend({
    next_actions: z.array(nextAction).max(4).describe('What to do next: heartbeat again, hand the work in for review.'),
    budget: heartbeatBudget.optional().describe('Present when a budget this run spends from is exhausted: the run may go on, but the next claim is refused.'),
  }),
  async run(tx, ctx, input) {
    const { lease, task } = await lockLiveLease(tx, input.id, ctx.actor, ctx, false);
    const ttlS = input.ttl_s === undefined ? lease.ttl_s : resolveTtl(ctx, input.ttl_s);
    const expiresAt = new Date(ctx.now.getTime() + ttlS * 1000);
    const { lease: renewed, budgeted } = await renewLease(tx, { lease, task }, { ttlS, expiresAt, now: ctx.now }, ctx.actor.workspaceId);
    // Most leases spend from no budget: the renewal said whether one can apply, so their heartbeat reads none.
    const budgets = input.usage
      ? (await addReportedUsage(tx, ctx, { lease, task }, input.usage)).budgets
      : budgeted
        ? await spendingOf(tx, await budgetsFor(tx, { agentId: lease.holder_id, labels: task.labels, taskId: task.id, workspaceId: ctx.actor.workspaceId }), ctx.now)
        : [];
    const exhausted = exhaustedOf(budgets);
    ctx.emit({
      type: 'lease.renewed',
      subject: lease.task_id,
      data: { lease_id: lease.id, expires_at: expiresAt.toISOString(), ...(input.note ? { note: input.note } : {}) },
    });
    return { ...toLease(renewed, ctx.now), next_actions: nextActions(task, ctx.actor, ctx.now), ...(exhausted ? { budget: { exhausted: true as const, ...budgetSummary(exhausted, ctx.now) } } : {}) };
  },
});
