import { z } from 'zod';
import { lockBudget, updateBudget } from '../../store/budgets.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { lockMaxCostTask, syncMaxCost } from './task-max-cost.ts';
import { budgetId, budgetNotFound, budgetOutput, spendingOf, toBudget } from './budget-schema.ts';

export const deleteBudget = defineOperation({
  name: 'budgets_delete',
  summary: 'Delete a budget: nothing spends from it or is refused by it any more.',
  description: 'Humans with the admin or owner role.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'DELETE', path: '/budgets/{id}' },
  input: z.strictObject({ id: budgetId }),
  output: budgetOutput,
  async run(tx, ctx, input) {
    await lockMaxCostTask(tx, input.id);
    const row = await lockBudget(tx, input.id);
    if (!row) throw budgetNotFound(input.id);
    assertVersion(`Budget ${row.id}`, row.version, ctx.expectedVersion);
    await syncMaxCost(tx, ctx, row, null);
    const deleted = await updateBudget(tx, row.id, { deleted_at: ctx.now, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'budget.deleted', subject: row.id, data: { name: row.name, applies_to: row.applies_to, target: row.target } });
    return toBudget((await spendingOf(tx, [deleted], ctx.now))[0] ?? { row: deleted, spent: 0 }, ctx.now);
  },
});
