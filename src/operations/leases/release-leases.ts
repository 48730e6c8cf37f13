import { z } from 'zod';
import { findLeases } from '../../store/leases.ts';
import { lockTaskIds, requeueTasks } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { shapeTask } from '../tasks/task-view.ts';
import { compactTaskOutput } from '../tasks/task-schema.ts';
import { assertActionable, leaseNotFound } from './held-lease.ts';
import { leaseId, leaseOutput, toLease } from './lease-schema.ts';

/** As many leases as one claim-next call hands out. */
const MAX_LEASES = 100;

export const releaseLeases = defineOperation({
  name: 'leases_release_many',
  summary: 'Give several tasks back unfinished at once (up to 100 leases): each lease ends and its task returns to todo. All or none.',
  description:
    'If any lease is refused, nothing is released and the problem names it; drop it and send the rest again.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  http: { method: 'POST', path: '/leases/release' },
  input: z.strictObject({
    ids: z
      .array(leaseId)
      .min(1)
      .max(MAX_LEASES, `at most ${MAX_LEASES} leases per call`)
      .refine((ids) => new Set(ids).size === ids.length, 'each lease at most once')
      .describe('The leases to release, each at most once.'),
    note: z.string().trim().min(1).max(500, 'notes are limited to 500 characters').optional().describe('Why, for the next claimers: recorded on every lease.released event.'),
  }),
  output: z.object({
    released: z.array(z.object({ task: compactTaskOutput, lease: leaseOutput })).max(MAX_LEASES).describe('One entry per lease, in the order of `ids`.'),
  }),
  async run(tx, ctx, input) {
    const found = new Map((await findLeases(tx, input.ids)).map((lease) => [lease.id, lease]));
    const missing = input.ids.find((id) => !found.has(id));
    if (missing) throw leaseNotFound(missing);
    // Tasks first, as every lease change: then the leases again, as they are now that no one else can change them.
    const tasks = await lockTaskIds(tx, [...new Set([...found.values()].map((l) => l.task_id))]);
    const leases = new Map((await findLeases(tx, input.ids)).map((lease) => [lease.id, lease]));
    const held = input.ids.map((id) => {
      const lease = leases.get(id);
      if (!lease || !tasks.has(lease.task_id)) throw leaseNotFound(id);
      assertActionable(lease, ctx.actor, ctx.now, true);
      return lease;
    });
    const requeued = await requeueTasks(tx, { leaseIds: input.ids, taskIds: held.map((l) => l.task_id) }, { now: ctx.now, id: ctx.actor.id, kind: ctx.actor.kind });
    const byTask = new Map(requeued.map((task) => [task.id, task]));
    const released = held.map((lease) => {
      const task = byTask.get(lease.task_id);
      if (!task) throw new Error(`task ${lease.task_id} was not requeued`);
      ctx.emit({ type: 'lease.released', subject: task.id, data: { lease_id: lease.id, ...(input.note ? { note: input.note } : {}) } });
      ctx.emit({ type: 'task.status_changed', subject: task.id, data: { from: 'in_progress', to: 'todo', reason: 'released' } });
      return { task: shapeTask(task, ctx.actor, { view: 'compact', at: ctx.now }), lease: toLease({ ...lease, state: 'released', ended_at: ctx.now }, ctx.now) };
    });
    return { released };
  },
});
