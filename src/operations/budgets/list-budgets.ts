import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listBudgets as listBudgetRows } from '../../store/budgets.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { appliesToParam, budgetOutput, spendingOf, toBudget } from './budget-schema.ts';

export const listBudgets = defineOperation({
  name: 'budgets_list',
  summary: 'List budgets, oldest first, each with what its current window spent; filter by what they apply to.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/budgets' },
  input: z.strictObject({ applies_to: appliesToParam.optional(), target: z.string().min(1).max(100).optional(), cursor: cursorParam, limit: limitParam }),
  output: pageSchema(budgetOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('budgets', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listBudgetRows(db, { appliesTo: input.applies_to, target: input.target, afterId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('budgets', row.id));
    return { data: (await spendingOf(db, page.rows, ctx.now)).map((s) => toBudget(s, ctx.now)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
