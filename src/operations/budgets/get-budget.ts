import { z } from 'zod';
import { findBudget } from '../../store/budgets.ts';
import { defineOperation } from '../define-operation.ts';
import { budgetId, budgetNotFound, budgetOutput, spendingOf, toBudget } from './budget-schema.ts';

export const getBudget = defineOperation({
  name: 'budgets_get',
  summary: 'Read one budget: its limit, what its current window spent, and when it resets.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/budgets/{id}' },
  input: z.strictObject({ id: budgetId }),
  output: budgetOutput,
  version: (budget) => budget.version,
  async run(db, ctx, input) {
    const row = await findBudget(db, input.id);
    if (!row) throw budgetNotFound(input.id);
    return toBudget((await spendingOf(db, [row], ctx.now))[0] ?? { row, spent: 0 }, ctx.now);
  },
});
