import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findLeases, leaseIsCurrent, lockLeasesTasks, renewLeases } from '../../store/leases.ts';
import type { Tx } from '../../store/connection.ts';
import { defineOperation, type GroupedCall } from '../define-operation.ts';
import { resolveTtl, ttlParam } from './grant.ts';
import { assertActionable, leaseNotFound } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';
import { nextAction } from '../tasks/task-schema.ts';
import { nextActions } from '../tasks/task-view.ts';
import { addReportedUsage } from '../runs/report-usage.ts';
import { usageInput } from '../runs/run-schema.ts';
import { budgetsFor } from '../../store/budgets.ts';
import { exhaustedOf } from '../budgets/budget-spend.ts';
import { budgetSummary, heartbeatBudget, spendingOf } from '../budgets/budget-schema.ts';

const input = z.strictObject({
  id: leaseId,
  note: z.string().trim().min(1).max(500, 'notes are limited to 500 characters').optional().describe('Progress, as one line a human can read in the timeline.'),
  ttl_s: ttlParam,
  usage: usageInput.optional().describe('Usage since your last report, as runs_usage takes it.'),
});

const output = leaseOutput.extend({
  next_actions: z.array(nextAction).max(4).describe('What to do next: heartbeat again, hand the work in for review.'),
  budget: heartbeatBudget.optional().describe('Present when a budget this run spends from is exhausted: the run may go on, but the next claim is refused.'),
});

export const heartbeatLease = defineOperation({
  name: 'leases_heartbeat',
  summary: 'Keep your lease alive: its expiry moves to now + TTL. May carry a short progress note for humans.',
  description: 'Send one every `heartbeat_interval_s`. A lease that already ran out cannot be revived: 409 lease_expired.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/leases/{id}/heartbeat' },
  input,
  output,
  async run(tx, ctx, input) {
    const [answer] = await renewHeld(tx, [{ ctx, input }]);
    if (answer instanceof BatonError) throw answer;
    if (answer === undefined) throw new Error('a heartbeat renewed nothing and refused nothing');
    return answer;
  },
  // A fleet's heartbeats share transactions (spec/domain-model.md, "What a heartbeat records"). One
  // that reports usage runs by itself: recording usage can refuse after its lease was renewed.
  group: {
    joins: (input) => input.usage === undefined,
    runMany: renewHeld,
  },
});

/**
 * Renews the leases the calls name, each for its caller: the tasks locked first, in id order, as
 * every lease change (so groups and other writes cannot deadlock); a lease that may have moved
 * before the lock is read again. Answers each call's lease, or the refusal it met before anything
 * of it was written (not found, not its holder, no longer live, a TTL out of bounds; a second call
 * on a lease the group already renews is refused too, and runs again by itself).
 */
async function renewHeld(tx: Tx, calls: readonly GroupedCall<z.output<typeof input>>[]): Promise<(z.output<typeof output> | BatonError)[]> {
  const locked = await lockLeasesTasks(tx, [...new Set(calls.map((c) => c.input.id))]);
  const tasks = new Map(locked.map(({ task }) => [task.id, task]));
  const stale = locked.filter(({ lease, task }) => !leaseIsCurrent(lease, task)).map(({ lease }) => lease.id);
  const leases = new Map([...locked.map(({ lease }) => lease), ...(stale.length > 0 ? await findLeases(tx, stale) : [])].map((lease) => [lease.id, lease]));
  const seen = new Set<string>();
  const held = calls.map(({ ctx, input }) => {
    try {
      if (seen.has(input.id)) throw new BatonError('write_contention', `Lease ${input.id} is being renewed by another heartbeat.`);
      seen.add(input.id);
      const lease = leases.get(input.id);
      const task = lease && tasks.get(lease.task_id);
      if (!lease || !task) throw leaseNotFound(input.id);
      // The time is read only now that the task is locked: waiting for the lock does not shorten a lease.
      assertActionable(lease, ctx.actor, ctx.now, false);
      const ttlS = input.ttl_s === undefined ? lease.ttl_s : resolveTtl(ctx, input.ttl_s);
      return { ctx, input, lease, task, renewal: { ttlS, expiresAt: new Date(ctx.now.getTime() + ttlS * 1000), now: ctx.now } };
    } catch (error) {
      if (error instanceof BatonError) return error;
      throw error;
    }
  });
  const live = held.filter((h): h is Exclude<typeof h, BatonError> => !(h instanceof BatonError));
  const workspaceId = live[0]?.ctx.actor.workspaceId ?? '';
  const renewed = await renewLeases(tx, live, workspaceId);
  const answers = new Map<(typeof live)[number], z.output<typeof output>>();
  for (const [i, call] of live.entries()) {
    const { ctx, input, lease, task, renewal } = call;
    const { lease: row, budgeted } = renewed[i] ?? { lease, budgeted: false };
    // Most leases spend from no budget: the renewal said whether one can apply, so their heartbeat reads none.
    const budgets = input.usage
      ? (await addReportedUsage(tx, ctx, { lease, task }, input.usage)).budgets
      : budgeted
        ? await spendingOf(tx, await budgetsFor(tx, { agentId: lease.holder_id, labels: task.labels, taskId: task.id, workspaceId }), ctx.now)
        : [];
    const exhausted = exhaustedOf(budgets);
    ctx.emit({
      type: 'lease.renewed',
      subject: lease.task_id,
      data: { lease_id: lease.id, expires_at: renewal.expiresAt.toISOString(), ...(input.note ? { note: input.note } : {}) },
    });
    answers.set(call, { ...toLease(row, ctx.now), next_actions: nextActions(task, ctx.actor, ctx.now), ...(exhausted ? { budget: { exhausted: true as const, ...budgetSummary(exhausted, ctx.now) } } : {}) });
  }
  return held.map((h) => (h instanceof BatonError ? h : (answers.get(h) ?? new BatonError('internal', 'A heartbeat was renewed without an answer.'))));
}
