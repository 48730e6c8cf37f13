import { humansWithScope } from '../../store/agents.ts';
import type { Tx } from '../../store/connection.ts';
import { closeInboxItems, insertInboxItems } from '../../store/inbox.ts';
import { inboxItem } from '../asks/ask-flow.ts';
import type { OperationContext } from '../define-operation.ts';
import { budgetAmount, budgetSummary, type Spending } from './budget-schema.ts';

/** What a budget's window crossed: 80 % of its limit, or 100 %. */
type Crossed = 'warning' | 'exhausted';

/**
 * Puts a budget that crossed 80 % or 100 % of its limit in the inbox of every human who may raise it
 * (enabled, holding `agents:admin`, as budgets_update requires: the admin and owner roles), in the
 * transaction of its event, so it is filed exactly when the event is written. The item names the
 * task whose run spent (`task_id`), the budget (`ref_id`) and that run's agent (`by`). A budget has
 * at most one open item per person: a new one marks those before it done, so an exhaustion
 * supersedes its warning.
 */
export async function fileBudgetItems(tx: Tx, ctx: OperationContext, spending: Spending, crossed: Crossed, cause: { taskId: string; agentId: string }): Promise<void> {
  const raisers = await humansWithScope(tx, 'agents:admin');
  await closeInboxItems(tx, spending.row.id, 'budget', ctx.now);
  const excerpt = budgetExcerpt(spending, crossed, ctx.now);
  await insertInboxItems(
    tx,
    raisers.map((principal) => inboxItem(ctx.ids, ctx.now, { principal_id: principal, kind: 'budget', task_id: cause.taskId, ref_id: spending.row.id, by_id: cause.agentId, excerpt })),
  );
}

/** `Budget "nightly" (label ci) is at 85 %: 0.85 USD of 1 USD spent; it resets at …`, or `… is exhausted: … claims on it are refused until …`. */
function budgetExcerpt(spending: Spending, crossed: Crossed, now: Date): string {
  const b = budgetSummary(spending, now);
  const name = b.name.length > 80 ? `${b.name.slice(0, 79)}…` : b.name;
  const spent = `${budgetAmount(b, b.spent)} of ${budgetAmount(b, b.limit)} spent`;
  const what = `Budget "${name}" (${b.applies_to} ${b.target})`;
  if (crossed === 'warning') {
    return `${what} is at ${Math.floor((b.spent / b.limit) * 100)} %: ${spent}; ${b.resets_at ? `it resets at ${b.resets_at}` : 'it never resets'}.`;
  }
  return `${what} is exhausted: ${spent}; claims on it are refused until it is raised${b.resets_at ? ` or resets at ${b.resets_at}` : ''}.`;
}
