import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { type BudgetRow, findBudget, lockMaxCostBudget, updateBudget } from '../../store/budgets.ts';
import type { Tx } from '../../store/connection.ts';
import { lockTask, type TaskChanges, updateTask } from '../../store/tasks.ts';
import type { OperationContext } from '../define-operation.ts';
import { spendingOf, toBudget } from './budget-schema.ts';
import { insertBudgetFor } from './create-budget.ts';

/**
 * `max_cost` and its currency on tasks_create and tasks_update (spec/runs.md, "Budgets"), without
 * descriptions or a bound in the schema: both tools are in every agent's default list, and the
 * task's output schema and the docs say what they mean. The bound still holds (400).
 */
export const maxCostParam = z.number().positive().max(1_000_000, 'at most 1,000,000');
export const maxCostCurrencyParam = z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD');

/** A task's max_cost as its columns keep it: micro-units and currency, or none. */
export interface MaxCost {
  micros: number | null;
  currency: string | null;
}

/** What a request asks of max_cost: the amount (null clears it) and currency, each absent when not sent. */
export function requestedMaxCost(current: MaxCost, input: { max_cost?: number | null | undefined; max_cost_currency?: string | undefined }): MaxCost {
  if (input.max_cost === null) return { micros: null, currency: null };
  if (input.max_cost === undefined && input.max_cost_currency === undefined) return current;
  if (input.max_cost === undefined && current.micros === null) {
    throw new BatonError('validation_failed', 'max_cost_currency goes with max_cost.', { extra: { errors: [{ pointer: '/max_cost_currency', detail: 'only with max_cost', location: 'body' }] } });
  }
  return {
    micros: input.max_cost === undefined ? current.micros : Math.round(input.max_cost * 1e6),
    currency: input.max_cost_currency ?? current.currency ?? 'USD',
  };
}

/**
 * Makes a task's max_cost so: its task budget (cost, lifetime, named `max_cost`) created, changed or
 * deleted, each with its budget event, and answers the task's column changes. Setting one where
 * there was none, or lowering it, is anyone's who may change the task; raising, clearing or
 * changing its currency is a human admin's or owner's, as raising a budget is. The task is locked.
 */
export async function applyMaxCost(tx: Tx, ctx: OperationContext, taskId: string, current: MaxCost, next: MaxCost): Promise<TaskChanges> {
  if (next.micros === current.micros && next.currency === current.currency) return {};
  const raises = current.micros !== null && (next.micros === null || next.micros > current.micros || next.currency !== current.currency);
  if (raises && ctx.actor.kind !== 'human') {
    throw new BatonError('human_required', `Only a human admin or owner may raise or remove task ${taskId}'s max_cost.`, { hint: 'Lower it, or ask a human to raise it.' });
  }
  if (raises && !ctx.actor.scopes.has('agents:admin')) {
    throw new BatonError('forbidden_scope', `Raising or removing task ${taskId}'s max_cost needs the admin or owner role.`, { extra: { required_scope: 'agents:admin' } });
  }
  const budget = await lockMaxCostBudget(tx, taskId);
  const by = { updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind };
  if (budget && next.micros !== null && budget.currency === next.currency) {
    const from = Number(budget.limit_amount) / 1e6;
    // A new limit may cross 80 % and 100 % again: their events are written afresh, as budgets_update does.
    const updated = await updateBudget(tx, budget.id, { limit_amount: next.micros, warned_for: null, exhausted_for: null, ...by });
    const [spending] = await spendingOf(tx, [updated], ctx.now);
    const state = toBudget(spending ?? { row: updated, spent: 0 }, ctx.now).state;
    ctx.emit({ type: 'budget.updated', subject: budget.id, data: { changes: { limit: { from, to: next.micros / 1e6 } }, state } });
  } else {
    if (budget) {
      await updateBudget(tx, budget.id, { deleted_at: ctx.now, ...by });
      ctx.emit({ type: 'budget.deleted', subject: budget.id, data: { name: budget.name, applies_to: budget.applies_to, target: budget.target } });
    }
    if (next.micros !== null) {
      await insertBudgetFor(tx, ctx, { name: 'max_cost', applies_to: 'task', target: taskId, unit: 'cost', currency: next.currency, period: 'lifetime', limit: next.micros / 1e6, task_max_cost: true });
    }
  }
  return { max_cost_micros: next.micros, max_cost_currency: next.micros === null ? null : next.currency };
}

/**
 * Before budgets_update or budgets_delete locks a budget: when it is a task's max_cost, its task
 * is locked first (every write locks a task before its budgets, so two never wait on each other).
 */
export async function lockMaxCostTask(tx: Tx, budgetId: string): Promise<void> {
  const budget = await findBudget(tx, budgetId);
  if (budget?.task_max_cost) await lockTask(tx, budget.target);
}

/** Keeps a task's max_cost in step with its budget changed by budgets_update (a new limit) or budgets_delete (null). */
export async function syncMaxCost(tx: Tx, ctx: OperationContext, budget: BudgetRow, micros: number | null): Promise<void> {
  if (!budget.task_max_cost || Number(budget.limit_amount) === micros) return;
  const changes = { max_cost_micros: micros, ...(micros === null ? { max_cost_currency: null } : {}) };
  await updateTask(tx, budget.target, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
  ctx.emit({ type: 'task.updated', subject: budget.target, data: { changes: { max_cost: { from: Number(budget.limit_amount) / 1e6, to: micros === null ? null : micros / 1e6 } } } });
}
