import { z } from 'zod';
import { addSpend, lockBudget, updateBudget as writeBudget } from '../../store/budgets.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { budgetId, budgetNotFound, budgetOutput, limitParam, spendingOf, toBudget, toStored } from './budget-schema.ts';
import { budgetWindow } from '../../domain/budget-window.ts';
import { lockMaxCostTask, syncMaxCost } from './task-max-cost.ts';

export const updateBudget = defineOperation({
  name: 'budgets_update',
  summary: 'Raise, lower or rename a budget, or set what its current window spent (`spent: 0` overrides it until it resets).',
  description: 'Humans with the admin or owner role. A raised limit lets claims through at once.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/budgets/{id}' },
  input: z.strictObject({
    id: budgetId,
    name: z.string().trim().min(1).max(200).optional(),
    limit: limitParam.optional(),
    spent: z.number().min(0).max(1e12).optional().describe("Sets what the current window spent, e.g. 0 to forgive it; the next window starts over anyway."),
  }),
  output: budgetOutput,
  version: (budget) => budget.version,
  async run(tx, ctx, input) {
    await lockMaxCostTask(tx, input.id);
    const row = await lockBudget(tx, input.id);
    if (!row) throw budgetNotFound(input.id);
    assertVersion(`Budget ${row.id}`, row.version, ctx.expectedVersion);
    const [current] = await spendingOf(tx, [row], ctx.now);
    const before = toBudget(current ?? { row, spent: 0 }, ctx.now);
    const had = current?.spent ?? 0;
    const spent = input.spent === undefined ? had : toStored(row.unit, input.spent);
    // An override is a row of what it changes, so reports in flight still add to it.
    if (spent !== had) await addSpend(tx, [{ budget_id: row.id, window_start: budgetWindow(row.period, ctx.now).start, amount: spent - had, at: ctx.now }]);
    const updated = await writeBudget(tx, row.id, {
      ...(input.name === undefined ? {} : { name: input.name }),
      ...(input.limit === undefined ? {} : { limit_amount: toStored(row.unit, input.limit) }),
      // A new limit or spend may cross 80 % and 100 % again: their events are written afresh.
      warned_for: null,
      exhausted_for: null,
      updated_at: ctx.now,
      updated_by_id: ctx.actor.id,
      updated_by_kind: ctx.actor.kind,
    });
    await syncMaxCost(tx, ctx, row, Number(updated.limit_amount));
    const budget = toBudget({ row: updated, spent }, ctx.now);
    const changes = Object.fromEntries((['name', 'limit', 'spent'] as const).filter((k) => budget[k] !== before[k]).map((k) => [k, { from: before[k], to: budget[k] }]));
    ctx.emit({ type: 'budget.updated', subject: row.id, data: { changes, state: budget.state } });
    return budget;
  },
});
