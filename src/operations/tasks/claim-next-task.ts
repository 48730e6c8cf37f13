import { z } from 'zod';
import { priorityRank } from '../../domain/task-priority.ts';
import { type ClaimableRow, type ClaimQuery, nextClaimableAt, pickClaimable } from '../../store/leases.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { type Claimed, claimOutput, claimTasks, expireSuperseded, lapsesOf, resolveTtl, ttlParam } from '../leases/grant.ts';
import type { Tx } from '../../store/connection.ts';
import type { TaskPriority } from '../../domain/task-priority.ts';
import { reservationRefusals } from '../reservations/task-reservations.ts';
import { taskLabels, taskPriority } from './task-schema.ts';
import { admitClaims, claimAvoids } from '../budgets/budget-spend.ts';
import { budgetExhausted } from '../budgets/budget-schema.ts';

/** How long an agent that found no work should wait before asking again. */
const EMPTY_QUEUE_RETRY_S = 10;

/** Which tasks a claim of the next one considers (tasks_claim_next, leases_cycle). */
export const claimFilter = {
  labels: taskLabels.default([]).describe('Only tasks carrying all of these labels.'),
  min_priority: taskPriority.default('low').describe('Only tasks at this priority or above.'),
};

/** A claim-next answer's fields. */
export const claimNextOutput = {
  claims: z.array(claimOutput).max(100),
  retry_after_s: z.int().nullable().describe('Set when nothing was claimable: wait this long before asking again.'),
  next_claimable_at: z.iso
    .datetime()
    .nullable()
    .describe('Set when nothing was claimable and a task is waiting out a back-off: when the first of them becomes claimable.'),
};

/**
 * Claims up to `limit` matching tasks for the caller, never one of `exclude` (tasks this transaction
 * just gave back), and says when to ask again if none was claimable.
 */
export async function claimNext(
  tx: Tx,
  ctx: OperationContext,
  q: { labels: string[]; min_priority: TaskPriority; limit: number; ttl_s?: number | undefined },
  exclude: readonly string[] = [],
  budgets: 'refuse' | 'skip' = 'skip',
): Promise<{ claims: Claimed[]; retry_after_s: number | null; next_claimable_at: string | null }> {
  const ttlS = resolveTtl(ctx, q.ttl_s);
  if (q.limit === 0) return { claims: [], retry_after_s: null, next_claimable_at: null };
  const avoids = await claimAvoids(tx, ctx);
  if (avoids.own && budgets === 'refuse') throw budgetExhausted(avoids.own, ctx.now, undefined);
  const query = { now: ctx.now, claimerId: ctx.actor.id, minPriority: priorityRank(q.min_priority), labels: q.labels, limit: q.limit };
  const avoid = { labels: avoids.labels.map((s) => s.row.target), ids: avoids.tasks.map((s) => s.row.target) };
  const tasks = avoids.own ? [] : await pickReservable(tx, ctx, { ...query, avoid }, exclude);
  const { admitted, refused } = await admitClaims(tx, ctx, tasks, avoids.read);
  const claims = await claimTasks(tx, ctx, admitted, ttlS);
  if (claims.length > 0) return { claims, retry_after_s: null, next_claimable_at: null };
  if (budgets === 'refuse') {
    // Nothing claimed: when budgets stopped it, say which, rather than an empty queue.
    if (refused[0]) throw refused[0];
    const stopped = avoid.labels.length + avoid.ids.length > 0 ? (await pickClaimable(tx, { ...query, limit: 1 })).find((task) => !exclude.includes(task.id)) : undefined;
    const by = stopped && [...avoids.tasks, ...avoids.labels].find(({ row }) => (row.applies_to === 'task' ? row.target === stopped.id : stopped.labels.includes(row.target)));
    if (stopped && by) throw budgetExhausted(by, ctx.now, stopped.id);
  }
  const next = await nextClaimableAt(tx, query);
  const untilNext = next ? Math.max(1, Math.ceil((next.getTime() - ctx.now.getTime()) / 1000)) : EMPTY_QUEUE_RETRY_S;
  return { claims, retry_after_s: Math.min(EMPTY_QUEUE_RETRY_S, untilNext), next_claimable_at: next?.toISOString() ?? null };
}

/**
 * Picks up to `query.limit` claimable tasks, none of `exclude`, whose required reservations are free
 * (their keys now locked by this transaction); a task whose reservations someone holds is passed
 * over for the next, for a bounded number of picks. The tasks to pass over go to the pick as ids to
 * avoid, so it asks for exactly `query.limit`: asking for more, to drop them after, turned a claim of
 * one into a pick of several, whose generic plan sorted the whole queue (93 ms a pick at 16,000
 * agents, on every cycle after a failed attempt; bench/README.md).
 */
async function pickReservable(tx: Tx, ctx: OperationContext, query: ClaimQuery, exclude: readonly string[]): Promise<ClaimableRow[]> {
  const refused = new Set<string>();
  for (let round = 1; ; round++) {
    const avoid = { labels: query.avoid?.labels ?? [], ids: [...(query.avoid?.ids ?? []), ...exclude, ...refused] };
    const picked = await pickUnlapsed(tx, ctx, { ...query, avoid });
    const refusals = await reservationRefusals(tx, ctx, picked);
    const free = picked.filter((task) => !refusals.has(task.id));
    const exhausted = picked.length < query.limit;
    if (refusals.size === 0 || exhausted || round === PICK_ROUNDS) return free;
    for (const id of refusals.keys()) refused.add(id);
  }
}

/** How many picks one claim makes through lapsed leases before it leaves the rest to the sweeper. */
const PICK_ROUNDS = 3;

/**
 * Picks claimable tasks, none with a lapsed lease: a lapsed lease picked is first counted as the
 * sweeper counts it (`expireSuperseded`), which puts its task in back-off or the dead-letter (or,
 * with no back-off, back in the queue), and the pick runs again. A pick that finds none (the common
 * case) is the only round trip. After `PICK_ROUNDS` picks the claim takes what the last one found
 * unlapsed (maybe nothing), so a queue full of lapsed leases costs one claim a bounded amount of work;
 * the sweeper counts the rest.
 */
async function pickUnlapsed(tx: Tx, ctx: OperationContext, query: ClaimQuery): Promise<ClaimableRow[]> {
  for (let round = 1; ; round++) {
    const picked = await pickClaimable(tx, query);
    const lapsed = picked.filter((task) => task.status === 'in_progress').map((task) => task.id);
    if (lapsed.length === 0) return picked;
    const counted = await lapsesOf(tx, ctx, lapsed);
    // Locked by this transaction since the pick, each is still lapsed; one left out would be picked forever.
    if (counted.length !== lapsed.length) throw new Error(`picked ${lapsed.length} lapsed tasks but locked ${counted.length}`);
    await expireSuperseded(tx, ctx, counted);
    if (round === PICK_ROUNDS) return picked.filter((task) => task.status !== 'in_progress');
  }
}

export const claimNextTask = defineOperation({
  name: 'tasks_claim_next',
  summary: 'Claim the next matching todo task (or up to `limit` of them), highest priority first, then oldest.',
  description:
    'Atomic: concurrent claimers never get the same task. Candidates: unassigned tasks and yours. Each claim carries the `discussion`. An empty queue is no error: `claims` is empty, `retry_after_s` says when to ask again. Tasks on an exhausted budget are skipped; when that was all, 409 budget_exhausted.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks/claim' },
  input: z.strictObject({
    ...claimFilter,
    limit: z.int().min(1).max(100).default(1).describe('How many tasks to claim at once (1–100), each with its own lease.'),
    ttl_s: ttlParam,
  }),
  output: z.object(claimNextOutput),
  genericPlans: (input) => input.limit === 1,
  run: (tx, ctx, input) => claimNext(tx, ctx, input, [], 'refuse'),
});
