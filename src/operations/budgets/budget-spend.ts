import { budgetState } from '../../domain/budget-window.ts';
import type { BatonError } from '../../errors.ts';
import { type BudgetRow, budgetsFor, claimerBudgets, recordSpend, type SpendTarget } from '../../store/budgets.ts';
import type { Tx } from '../../store/connection.ts';
import type { OperationContext } from '../define-operation.ts';
import { budgetExhausted, budgetSummary, windowSpend } from './budget-schema.ts';

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
 * Adds a spend to every budget it counts against, locked in id order, in the caller's transaction:
 * a usage report (a write under an Idempotency-Key, so a replay never adds again) or a claim (one
 * run). A budget crossing 80 % of its limit writes `budget.warning`, reaching it `budget.exhausted`,
 * each once per window. Returns the budgets as they stand after.
 */
export async function chargeBudgets(tx: Tx, ctx: OperationContext, target: SpendTarget, spend: Spend, locked?: readonly BudgetRow[]): Promise<BudgetRow[]> {
  const rows = locked ?? (await budgetsFor(tx, target, true));
  const after: BudgetRow[] = [];
  for (const row of rows) {
    const w = windowSpend(row, ctx.now);
    const add = amountFor(row, spend);
    if (add === 0 && w.current) {
      after.push(row);
      continue;
    }
    const limit = Number(row.limit_amount);
    const spent = w.spent + add;
    const windowStart = w.current ? row.window_start : w.start;
    const next = { window_start: windowStart, spent, warned_for: w.current ? row.warned_for : null, exhausted_for: w.current ? row.exhausted_for : null };
    const state = budgetState(spent, limit);
    const sameWindow = (at: Date | null) => at !== null && at.getTime() === windowStart.getTime();
    const cause = { task_id: target.taskId, agent_id: target.agentId, ...(spend.runs > 0 ? { claim: true } : {}) };
    if (state !== 'ok' && !sameWindow(next.warned_for)) {
      next.warned_for = windowStart;
      ctx.emit({ type: 'budget.warning', subject: row.id, data: { ...budgetSummary({ ...row, ...next }, ctx.now), ...cause } });
    }
    if (state === 'exhausted' && !sameWindow(next.exhausted_for)) {
      next.exhausted_for = windowStart;
      ctx.emit({ type: 'budget.exhausted', subject: row.id, data: { ...budgetSummary({ ...row, ...next }, ctx.now), ...cause } });
    }
    await recordSpend(tx, row.id, next);
    after.push({ ...row, ...next });
  }
  return after;
}

/** The first of these budgets that is spent out in its current window. */
export function exhaustedOf(rows: readonly BudgetRow[], now: Date): BudgetRow | undefined {
  return rows.find((row) => windowSpend(row, now).spent >= Number(row.limit_amount));
}

/**
 * Lets a claim of `target` spend from its budgets: refused (the error returned) when one is
 * exhausted; otherwise the run is counted against every budget counting runs. The budgets stay
 * locked to the end of the transaction, so concurrent claims on one budget count one at a time.
 */
export async function spendClaim(tx: Tx, ctx: OperationContext, target: SpendTarget): Promise<BatonError | undefined> {
  const rows = await budgetsFor(tx, target, true);
  const spent = exhaustedOf(rows, ctx.now);
  if (spent) return budgetExhausted(spent, ctx.now, target.taskId);
  await chargeBudgets(tx, ctx, target, { costMicros: 0, currency: undefined, tokens: 0, runs: 1 }, rows);
  return undefined;
}

/**
 * What a claim of the next task must steer around, read without locks (the grant checks again under
 * them): the claimer's own exhausted budget refuses every claim; exhausted label and task budgets
 * take their tasks out of the pick.
 */
export async function claimAvoids(tx: Tx, ctx: OperationContext): Promise<{ own: BudgetRow | undefined; labels: BudgetRow[]; tasks: BudgetRow[] }> {
  const rows = (await claimerBudgets(tx, ctx.actor.id)).filter((row) => exhaustedOf([row], ctx.now));
  return {
    own: rows.find((row) => row.applies_to === 'agent'),
    labels: rows.filter((row) => row.applies_to === 'label'),
    tasks: rows.filter((row) => row.applies_to === 'task'),
  };
}

/** Splits locked, claimable tasks into those the caller's claim may spend on (each run counted) and the refusals. */
export async function admitClaims<T extends { id: string; labels: string[] }>(tx: Tx, ctx: OperationContext, tasks: readonly T[]): Promise<{ admitted: T[]; refused: BatonError[] }> {
  const admitted: T[] = [];
  const refused: BatonError[] = [];
  for (const task of tasks) {
    const refusal = await spendClaim(tx, ctx, { agentId: ctx.actor.id, labels: task.labels, taskId: task.id });
    if (refusal) refused.push(refusal);
    else admitted.push(task);
  }
  return { admitted, refused };
}
