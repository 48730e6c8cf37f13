import { BatonError } from '../../errors.ts';
import { latestLease } from '../../store/leases.ts';
import type { TaskRow } from '../../store/tasks.ts';
import type { Tx } from '../../store/connection.ts';
import type { OperationContext } from '../define-operation.ts';

/**
 * Separation of duties (`BATON_SEPARATION_OF_DUTIES`, on by default): a task in review is not
 * approved by a principal who handed it in (`handoff.by`) or held the lease it was handed in from
 * (the last lease: leaving in_progress ends it), human or agent. Called by every way to approve:
 * tasks_review's approve and tasks_update's in_review → done (spec/collaboration.md, "Review with feedback").
 */
export async function checkNotOwnHandIn(tx: Tx, ctx: OperationContext, row: TaskRow): Promise<void> {
  if (!ctx.config.separationOfDuties) return;
  const handedIn = row.handoff?.by.id === ctx.actor.id;
  if (!handedIn && (await latestLease(tx, row.id))?.holder_id !== ctx.actor.id) return;
  const what = handedIn ? `handed task ${row.id} in` : `held the lease task ${row.id} was handed in from`;
  throw new BatonError('separation_of_duties', `You (${ctx.actor.kind} ${ctx.actor.id}) ${what}, so you may not approve it.`, {
    hint: 'Leave it in review for another reviewer (a human, or an agent with tasks:review), or request changes. An operator may turn the rule off with BATON_SEPARATION_OF_DUTIES=off.',
  });
}
