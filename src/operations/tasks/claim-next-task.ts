import { z } from 'zod';
import { priorityRank } from '../../domain/task-priority.ts';
import { nextClaimableAt, pickClaimable } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { claimOutput, claimTasks, resolveTtl, ttlParam } from '../leases/grant.ts';
import { taskLabels, taskPriority } from './task-schema.ts';

/** How long an agent that found no work should wait before asking again. */
const EMPTY_QUEUE_RETRY_S = 10;

export const claimNextTask = defineOperation({
  name: 'tasks_claim_next',
  summary: 'Claim the next matching todo task (or up to `limit` of them), highest priority first, then oldest.',
  description:
    'Atomic: concurrent claimers never receive the same task. Tasks assigned to you and unassigned tasks are candidates; tasks assigned to others never are. Each claim carries the `discussion` (the open change request first, then the latest human comments). An empty queue is not an error: `claims` is empty and `retry_after_s` says when to ask again.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  http: { method: 'POST', path: '/tasks/claim' },
  input: z.strictObject({
    labels: taskLabels.default([]).describe('Only tasks carrying all of these labels.'),
    min_priority: taskPriority.default('low').describe('Only tasks at this priority or above.'),
    limit: z.int().min(1).max(100).default(1).describe('How many tasks to claim at once (1–100), each with its own lease.'),
    ttl_s: ttlParam,
  }),
  output: z.object({
    claims: z.array(claimOutput).max(100),
    retry_after_s: z.int().nullable().describe('Set when nothing was claimable: wait this long before asking again.'),
    next_claimable_at: z.iso
      .datetime()
      .nullable()
      .describe('Set when nothing was claimable and a task is waiting out a back-off: when the first of them becomes claimable.'),
  }),
  async run(tx, ctx, input) {
    const ttlS = resolveTtl(ctx, input.ttl_s);
    const tasks = await pickClaimable(tx, { now: ctx.now, claimerId: ctx.actor.id, minPriority: priorityRank(input.min_priority), labels: input.labels, limit: input.limit });
    const claims = await claimTasks(tx, ctx, tasks, ttlS);
    if (claims.length > 0) return { claims, retry_after_s: null, next_claimable_at: null };
    const next = await nextClaimableAt(tx, ctx.actor.id, ctx.now);
    const untilNext = next ? Math.max(1, Math.ceil((next.getTime() - ctx.now.getTime()) / 1000)) : EMPTY_QUEUE_RETRY_S;
    return { claims, retry_after_s: Math.min(EMPTY_QUEUE_RETRY_S, untilNext), next_claimable_at: next?.toISOString() ?? null };
  },
});
