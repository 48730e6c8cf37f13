import { z } from 'zod';
import { TRANSITIONS, type TaskStatus } from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import { handInTasks, NO_LEASE, type TaskRow, updateTask } from '../../store/tasks.ts';
import { artifactId } from '../artifacts/artifact-schema.ts';
import { checkArtifacts, lockLiveTask } from '../comments/comment-access.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { shapeTask } from './task-view.ts';
import { HANDOFF_ARTIFACTS_MAX, HANDOFF_SUMMARY_MAX, taskId, fullTaskOutput } from './task-schema.ts';
import { checkLease } from './update-task.ts';
import { deliverToReview } from '../inbox/task-inbox.ts';
import type { OperationContext } from '../define-operation.ts';
import type { Tx } from '../../store/connection.ts';

export const handInTask = defineOperation({
  name: 'tasks_hand_in',
  summary: 'Hand finished work in for review, with a summary and artifact references: in_progress → in_review.',
  description:
    'The lease holder (or a human) sends it, with `lease_epoch`. The lease ends; the reviewer sees `handoff` on the task. An open change request counts as answered.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks/{id}/hand_in' },
  input: z.strictObject({
    id: taskId,
    summary: z
      .string()
      .trim()
      .min(1, 'summary must not be empty')
      .max(HANDOFF_SUMMARY_MAX, `summary is limited to ${HANDOFF_SUMMARY_MAX} characters; put the long form in an artifact and list it in artifacts`)
      .default('')
      .describe(`What you did and how to check it, Markdown, up to ${HANDOFF_SUMMARY_MAX} characters.`),
    artifacts: z
      .array(artifactId)
      .max(HANDOFF_ARTIFACTS_MAX, `at most ${HANDOFF_ARTIFACTS_MAX} artifacts`)
      .refine((ids) => new Set(ids).size === ids.length, 'artifacts must not repeat')
      .default([])
      .describe('Artifacts for the reviewer (a diff, a report), by id.'),
    lease_epoch: z.int().min(1).optional().describe("Your lease's fencing epoch: a stale one is refused with lease_expired."),
  }),
  output: fullTaskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    const row = await lockLiveTask(tx, input.id);
    assertVersion(`Task ${row.id}`, row.version, ctx.expectedVersion);
    // Back in the queue (its lease lapsed and was swept, or was released), the epoch sent is stale: lease_expired, as tasks_update says.
    if (input.lease_epoch !== undefined && (row.status === 'todo' || row.status === 'blocked')) checkLease(row, input.lease_epoch, ctx);
    if (row.status !== 'in_progress') {
      throw new BatonError('invalid_transition', `Task ${row.id} is ${row.status}; only work in progress can be handed in.`, {
        hint: handInHint(row),
        extra: { legal_transitions: [...TRANSITIONS[row.status as TaskStatus]], current_status: row.status },
      });
    }
    checkLease(row, input.lease_epoch, ctx);
    const updated = await recordHandIn(tx, ctx, row, input);
    return shapeTask(updated, ctx.actor, { view: 'full', at: ctx.now });
  },
});

/** What to do instead of handing in a task that is not in progress, by where it is. */
function handInHint(row: TaskRow): string {
  switch (row.status) {
    case 'in_review':
      return 'It was handed in and waits for a reviewer: [[wait]] returns when it is approved or sent back to you.';
    case 'done':
    case 'cancelled':
      return `It is ${row.status}; there is nothing to hand in. [[tasks_claim_next]] takes your next task.`;
    default:
      return `Claim the task first ([[tasks_claim id=${row.id}]]), do the work, then hand it in.`;
  }
}

interface Work {
  summary: string;
  artifacts: readonly string[];
}

/**
 * Hands in a locked task in progress whose holder the caller was checked to be: in_review with the
 * handoff, its lease ended, the open change request answered; emits task.handed_in, lease.released
 * and task.status_changed, and puts a `to_review` item in each reviewer's inbox. The artifacts must exist (checked here, at `pointer`).
 */
export async function recordHandIn(tx: Tx, ctx: OperationContext, row: TaskRow, work: Work, pointer = '/artifacts'): Promise<TaskRow> {
  await checkArtifacts(tx, work.artifacts, pointer);
  const updated = await updateTask(
    tx,
    row.id,
    { status: 'in_review', ...NO_LEASE, handoff: handoffOf(ctx, work), changes_requested_id: null, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind },
    row.lease_id ? { id: row.lease_id, state: 'ended' } : undefined,
  );
  emitHandIn(ctx, row, work);
  await deliverToReview(tx, ctx, [{ id: row.id, summary: work.summary }]);
  return updated;
}

/** `recordHandIn` for several held tasks (each with a live lease) in one statement; answers them in the order given. */
export async function recordHandIns(tx: Tx, ctx: OperationContext, items: readonly { row: TaskRow & { lease_id: string }; work: Work; pointer: string }[]): Promise<TaskRow[]> {
  for (const { work, pointer } of items) if (work.artifacts.length > 0) await checkArtifacts(tx, work.artifacts, pointer);
  const updated = await handInTasks(
    tx,
    { leaseIds: items.map((i) => i.row.lease_id), handoffs: items.map(({ row, work }) => ({ id: row.id, handoff: handoffOf(ctx, work) })) },
    { now: ctx.now, id: ctx.actor.id, kind: ctx.actor.kind },
  );
  await deliverToReview(tx, ctx, items.map(({ row, work }) => ({ id: row.id, summary: work.summary })));
  const byId = new Map(updated.map((row) => [row.id, row]));
  return items.map(({ row, work }) => {
    emitHandIn(ctx, row, work);
    const done = byId.get(row.id);
    if (!done) throw new Error(`task ${row.id} was not handed in`);
    return done;
  });
}

function handoffOf(ctx: OperationContext, work: Work) {
  return { summary: work.summary, artifacts: [...work.artifacts], by: { id: ctx.actor.id, kind: ctx.actor.kind }, at: ctx.now.toISOString() };
}

function emitHandIn(ctx: OperationContext, row: TaskRow, work: Work): void {
  ctx.emit({ type: 'task.handed_in', subject: row.id, data: { summary: work.summary, artifacts: [...work.artifacts], answers: row.changes_requested_id } });
  if (row.lease_id) ctx.emit({ type: 'lease.released', subject: row.id, data: { lease_id: row.lease_id, reason: 'status_changed', to: 'in_review' } });
  ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: 'in_progress', to: 'in_review' } });
}
