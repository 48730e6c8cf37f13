import { budgetState, budgetWindow } from '../../domain/budget-window.ts';
import type { BatonError } from '../../errors.ts';
import { addSpend, type BudgetRow, budgetsFor, claimerBudgets, lockBudgets, markCrossed, type SpendTarget, spendsFrom, windowSpent } from '../../store/budgets.ts';
import type { Tx } from '../../store/connection.ts';
import type { OperationContext } from '../define-operation.ts';
import { fileBudgetItems } from './budget-inbox.ts';
import { budgetExhausted, budgetSummary, type Spending, spendingOf } from './budget-schema.ts';

/** What one report or claim spends: micro-units in one currency, tokens, runs. */
export interface Spend {
  costMicros: number;
  currency: string | undefined;
  tokens: number;
  runs: number;
}

function amountFor(row: BudgetRow, spend: Spend): number {
  switch (row.unit) {
    case 'cost':
      return spend.currency === row.currency ? spend.costMicros : 0;
    case 'tokens':
      return spend.tokens;
    case 'runs':
      return spend.runs;
  }
}

/**
 * Adds a spend to every budget of `target` it counts against, in the caller's transaction: a usage
 * report (a write under an Idempotency-Key, so a replay never adds again) or a claim (one run). Each
 * is a row of its own, so concurrent reports never wait on each other. The spend that takes a window
 * to 80 % of its limit writes `budget.warning`, to 100 % `budget.exhausted`, each once per window,
 * with an inbox item for each human who may raise the budget (budget-inbox.ts).
 * Returns every budget of `target` with what its window spent after.
 */
export async function chargeBudgets(tx: Tx, ctx: OperationContext, target: SpendTarget, spend: Spend, read?: readonly BudgetRow[]): Promise<Spending[]> {
  const rows = read ?? (await budgetsFor(tx, target));
  const charged = rows.map((row) => ({ row, add: amountFor(row, spend), start: budgetWindow(row.period, ctx.now).start })).filter((c) => c.add !== 0);
  await addSpend(
    tx,
    charged.map((c) => ({ budget_id: c.row.id, window_start: c.start, amount: c.add, at: ctx.now })),
  );
  const after = await spendingOf(tx, rows, ctx.now);
  const cause = { task_id: target.taskId, agent_id: target.agentId };
  for (const c of charged) {
    const spending = after.find((s) => s.row.id === c.row.id);
    if (!spending) continue;
    const state = budgetState(spending.spent, Number(c.row.limit_amount));
    const marked = (at: Date | null) => at !== null && at.getTime() === c.start.getTime();
    const warned = state !== 'ok' && !marked(c.row.warned_for) && (await markCrossed(tx, c.row.id, 'warned_for', c.start));
    if (warned) ctx.emit({ type: 'budget.warning', subject: c.row.id, data: { ...budgetSummary(spending, ctx.now), ...cause } });
    const exhausted = state === 'exhausted' && !marked(c.row.exhausted_for) && (await markCrossed(tx, c.row.id, 'exhausted_for', c.start));
    if (exhausted) ctx.emit({ type: 'budget.exhausted', subject: c.row.id, data: { ...budgetSummary(spending, ctx.now), ...cause } });
    // One item per crossing, the exhaustion's when one spend crossed both.
    if (warned || exhausted) await fileBudgetItems(tx, ctx, spending, exhausted ? 'exhausted' : 'warning', target);
  }
  return after;
}

/** The first of these budgets that is spent out in its current window. */
export function exhaustedOf(spendings: readonly Spending[]): Spending | undefined {
  return spendings.find((s) => s.spent >= Number(s.row.limit_amount));
}

/**
 * Lets a claim of `target` spend from its budgets: refused (the error returned) when one is
 * exhausted; otherwise the run is counted against every budget counting runs. Budgets of runs are
 * locked first, to the end of the transaction, so concurrent claims on one count one at a time and
 * it is never overshot; money and tokens are read as committed, and what runs already in flight
 * report is their overshoot. `read`: `target`'s budgets, when the caller has them already.
 */
export async function spendClaim(tx: Tx, ctx: OperationContext, target: SpendTarget, read?: readonly BudgetRow[]): Promise<BatonError | undefined> {
  const rows = read ?? (await budgetsFor(tx, target));
  if (rows.length === 0) return undefined;
  await lockBudgets(
    tx,
    rows.filter((row) => row.unit === 'runs').map((row) => row.id),
  );
  const spent = exhaustedOf(await spendingOf(tx, rows, ctx.now));
  if (spent) return budgetExhausted(spent, ctx.now, target.taskId);
  await chargeBudgets(tx, ctx, target, { costMicros: 0, currency: undefined, tokens: 0, runs: 1 }, rows);
  return undefined;
}

/**
 * What a claim of the next task must steer around, read without locks (the grant checks again):
 * the claimer's own or its workspace's exhausted budget refuses every claim; exhausted label and
 * task budgets take their tasks out of the pick. `read` is every budget read, which holds those each
 * task of the pick spends from (`admitClaims` takes them, rather than reading them again).
 */
export async function claimAvoids(tx: Tx, ctx: OperationContext): Promise<{ own: Spending | undefined; labels: Spending[]; tasks: Spending[]; read: BudgetRow[] }> {
  const rows = await claimerBudgets(tx, ctx.actor.id, ctx.actor.workspaceId);
  const spent = await windowSpent(tx, rows.map((row) => ({ id: row.id, start: budgetWindow(row.period, ctx.now).start })));
  const exhausted = rows.filter((row) => (spent.get(row.id) ?? 0) >= Number(row.limit_amount)).map((row) => ({ row, spent: spent.get(row.id) ?? 0 }));
  return {
    own: exhausted.find((s) => s.row.applies_to === 'agent' || s.row.applies_to === 'workspace'),
    labels: exhausted.filter((s) => s.row.applies_to === 'label'),
    tasks: exhausted.filter((s) => s.row.applies_to === 'task'),
    read: rows,
  };
}

/**
 * Splits locked, claimable tasks into those the caller's claim may spend on (each run counted) and
 * the refusals. `read`, when the claim read its claimer's budgets already (`claimAvoids`), holds
 * those the tasks spend from; otherwise each task's are read.
 */
export async function admitClaims<T extends { id: string; labels: string[] }>(
  tx: Tx,
  ctx: OperationContext,
  tasks: readonly T[],
  read?: readonly BudgetRow[],
): Promise<{ admitted: T[]; refused: BatonError[] }> {
  const admitted: T[] = [];
  const refused: BatonError[] = [];
  for (const task of tasks) {
    const target = { agentId: ctx.actor.id, labels: task.labels, taskId: task.id, workspaceId: ctx.actor.workspaceId };
    const refusal = await spendClaim(tx, ctx, target, read?.filter((row) => spendsFrom(row, target)));
    if (refusal) refused.push(refusal);
    else admitted.push(task);
  }
  return { admitted, refused };
}
