import { z } from 'zod';
import { type BudgetPeriod, budgetWindow } from '../../domain/budget-window.ts';
import { BatonError } from '../../errors.ts';
import { addSpend, insertBudget, taskSpend } from '../../store/budgets.ts';
import { findTask } from '../../store/tasks.ts';
import type { Tx } from '../../store/connection.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { resolveAssignee } from '../shared/principals.ts';
import { taskNotFound } from '../tasks/get-task.ts';
import { taskLabels } from '../tasks/task-schema.ts';
import { appliesToParam, type Budget, budgetOutput, type BudgetScope, limitParam, periodParam, toBudget, toStored, unitParam } from './budget-schema.ts';

const currencyParam = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD').describe('For `cost`: the currency it counts (default USD); costs reported in another are not counted.');

export const createBudget = defineOperation({
  name: 'budgets_create',
  summary: "Set a budget on runs' spending: per workspace, agent, label or task, in money, tokens or runs, per day, week, month or lifetime.",
  description: 'Humans with the admin or owner role. At 80 % it warns (budget.warning); at 100 % claims spending from it are refused (409 budget_exhausted).',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/budgets', successStatus: 201 },
  input: z.strictObject({
    name: z.string().trim().min(1).max(200),
    applies_to: appliesToParam,
    target: z.string().min(1).max(100).optional().describe('The agent id, label or task id it applies to; none for `workspace`.'),
    unit: unitParam,
    currency: currencyParam.optional(),
    period: periodParam.optional().describe('Default: `lifetime` for a task, else `month`.'),
    limit: limitParam,
  }),
  output: budgetOutput,
  version: (budget) => budget.version,
  async run(tx, ctx, input) {
    return insertBudgetFor(tx, ctx, { ...input, target: budgetTarget(ctx, input.applies_to, input.target), period: input.period ?? (input.applies_to === 'task' ? 'lifetime' : 'month'), currency: unitCurrency(input.unit, input.currency) });
  },
});

/**
 * Inserts a budget (its target checked, a task's starting with what its runs spent) and writes
 * `budget.created`: budgets_create, and the budget a task's max_cost makes.
 */
export async function insertBudgetFor(
  tx: Tx,
  ctx: OperationContext,
  input: { name: string; applies_to: BudgetScope; target: string; unit: 'cost' | 'tokens' | 'runs'; currency: string | null; period: BudgetPeriod; limit: number; task_max_cost?: boolean },
): Promise<Budget> {
  const spent = await startingSpend(tx, ctx, input);
  const by = { id: ctx.actor.id, kind: ctx.actor.kind };
  const row = await insertBudget(tx, {
    id: ctx.ids.make('bdg'),
    name: input.name,
    applies_to: input.applies_to,
    target: input.target,
    unit: input.unit,
    currency: input.currency,
    period: input.period,
    limit_amount: toStored(input.unit, input.limit),
    ...(input.task_max_cost ? { task_max_cost: true } : {}),
    warned_for: null,
    exhausted_for: null,
    deleted_at: null,
    created_at: ctx.now,
    created_by_id: by.id,
    created_by_kind: by.kind,
    updated_at: ctx.now,
    updated_by_id: by.id,
    updated_by_kind: by.kind,
  });
  // A task budget starts with what the task's runs already spent: one row, in its window.
  await addSpend(tx, spent === 0 ? [] : [{ budget_id: row.id, window_start: budgetWindow(input.period, ctx.now).start, amount: spent, at: ctx.now }]);
  const budget = toBudget({ row, spent }, ctx.now);
  ctx.emit({ type: 'budget.created', subject: row.id, data: { name: budget.name, applies_to: budget.applies_to, target: budget.target, unit: budget.unit, currency: budget.currency, period: budget.period, limit: budget.limit } });
  return budget;
}

/**
 * What a budget applies to: a workspace budget's target is the caller's workspace (row-level
 * security keeps every budget in it anyway), the others name theirs.
 */
function budgetTarget(ctx: OperationContext, appliesTo: BudgetScope, target: string | undefined): string {
  if (appliesTo === 'workspace' && (target === undefined || target === ctx.actor.workspaceId)) return ctx.actor.workspaceId;
  if (appliesTo !== 'workspace' && target !== undefined) return target;
  const [message, detail] =
    appliesTo === 'workspace'
      ? [`A workspace budget applies to its own workspace, ${ctx.actor.workspaceId}, not ${target}.`, 'leave it out for a workspace budget']
      : [`A${appliesTo === 'agent' ? 'n' : ''} ${appliesTo} budget needs a target.`, `the ${appliesTo === 'agent' ? 'agent id' : appliesTo === 'label' ? 'label' : 'task id'} it applies to`];
  throw new BatonError('validation_failed', message, { extra: { errors: [{ pointer: '/target', detail, location: 'body' }] } });
}

/** A money budget counts one currency (USD unless named); a count has none. */
function unitCurrency(unit: 'cost' | 'tokens' | 'runs', currency: string | undefined): string | null {
  if (unit === 'cost') return currency ?? 'USD';
  if (currency !== undefined) {
    throw new BatonError('validation_failed', `A ${unit} budget counts no currency.`, {
      extra: { errors: [{ pointer: '/currency', detail: 'only for unit cost', location: 'body' }] },
    });
  }
  return null;
}

/**
 * Checks the target exists, and what it already spent: a task's budget counts the task's runs so far
 * (its lifetime); an agent's, a label's or the workspace's counts from its creation (runs record
 * totals, not when each report came).
 */
async function startingSpend(tx: Tx, _ctx: OperationContext, input: { applies_to: BudgetScope; target: string; unit: 'cost' | 'tokens' | 'runs'; currency: string | null }): Promise<number> {
  switch (input.applies_to) {
    case 'workspace':
      return 0;
    case 'agent':
      await resolveAssignee(tx, input.target, '/target');
      return 0;
    case 'label': {
      const label = taskLabels.element.safeParse(input.target);
      if (!label.success) throw new BatonError('validation_failed', `"${input.target}" is not a label.`, { extra: { errors: [{ pointer: '/target', detail: 'a label', location: 'body' }] } });
      return 0;
    }
    case 'task': {
      if (!(await findTask(tx, input.target))) throw taskNotFound(input.target);
      const spent = await taskSpend(tx, input.target, input.currency);
      return input.unit === 'cost' ? spent.cost : input.unit === 'tokens' ? spent.tokens : spent.runs;
    }
  }
}
