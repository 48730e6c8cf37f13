import { z } from 'zod';
import { findLeases, leaseIsCurrent, lockLeasesTasks } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { claimFilter, claimNext, claimNextOutput } from '../tasks/claim-next-task.ts';
import { checkEnding, endedOutput, endedView, endLease, leaseEnding } from './cycle-lease.ts';
import { recordHandIns } from '../tasks/hand-in-task.ts';
import { ttlParam } from './grant.ts';
import { assertActionable, leaseNotFound } from './held-lease.ts';

/** As many leases as one claim-next call hands out. */
const MAX_LEASES = 100;

export const cycleLeases = defineOperation({
  name: 'leases_cycle_many',
  summary: 'leases_cycle for up to 100 leases, then claims up to `limit` (default: as many). All or none: the problem names a lease refused.',
  kind: 'write',
  scope: 'tasks:claim',
  approval: 'none',
  http: { method: 'POST', path: '/leases/cycle' },
  input: z.strictObject({
    leases: z
      .array(z.strictObject(leaseEnding))
      .min(1)
      .max(MAX_LEASES, `at most ${MAX_LEASES} leases per call`)
      .refine((leases) => new Set(leases.map((l) => l.id)).size === leases.length, 'each lease at most once'),
    ...claimFilter,
    limit: z.int().min(0).max(MAX_LEASES).optional().describe('0 claims none.'),
    ttl_s: ttlParam,
  }),
  output: z.object({ ended: z.array(endedOutput).max(MAX_LEASES).describe('In the order of `leases`.'), ...claimNextOutput }),
  async run(tx, ctx, input) {
    input.leases.forEach((ending, i) => checkEnding(ending, `/leases/${i}`));
    const ids = input.leases.map((l) => l.id);
    // Tasks locked first, in id order, as every lease change; a lease that may have moved before the lock is read again.
    const locked = await lockLeasesTasks(tx, ids);
    const tasks = new Map(locked.map(({ task }) => [task.id, task]));
    const stale = locked.filter(({ lease, task }) => !leaseIsCurrent(lease, task)).map(({ lease }) => lease.id);
    const leases = new Map([...locked.map(({ lease }) => lease), ...(stale.length > 0 ? await findLeases(tx, stale) : [])].map((lease) => [lease.id, lease]));
    const held = input.leases.map((ending) => {
      const lease = leases.get(ending.id);
      const task = lease && tasks.get(lease.task_id);
      if (!lease || !task) throw leaseNotFound(ending.id);
      assertActionable(lease, ctx.actor, ctx.now, false);
      return { lease, task, ending };
    });
    // Failures one by one (each its own attempt count and back-off), hand-ins in one statement.
    const ended = new Map<string, z.output<typeof endedOutput>>();
    for (const [i, { ending, ...lease }] of held.entries()) {
      if (ending.outcome === 'failed') ended.set(ending.id, await endLease(tx, ctx, lease, ending, `/leases/${i}`));
    }
    const handIns = held.flatMap(({ lease, task, ending }, i) => (ending.outcome === 'handed_in' ? [{ lease, ending, row: { ...task, lease_id: lease.id }, work: { summary: ending.summary ?? '', artifacts: ending.artifacts }, pointer: `/leases/${i}/artifacts` }] : []));
    if (handIns.length > 0) {
      const done = await recordHandIns(tx, ctx, handIns);
      handIns.forEach(({ lease, ending }, i) => {
        const task = done[i];
        if (task) ended.set(ending.id, endedView(ctx, lease, task, 'handed_in'));
      });
    }
    const failed = held.filter((h) => h.ending.outcome === 'failed').map((h) => h.task.id);
    const next = await claimNext(tx, ctx, { ...input, limit: input.limit ?? ids.length }, failed);
    return { ended: ids.map((id) => ended.get(id)).filter((e) => e !== undefined), ...next };
  },
});
