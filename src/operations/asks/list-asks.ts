import { z } from 'zod';
import { listAsks as listAskRows } from '../../store/asks.ts';
import { latestEventId } from '../../store/events.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, namesFilter, pageSchema, paginate } from '../shared/lists.ts';
import { taskId } from '../tasks/task-schema.ts';
import { ASK_STATUSES, askOutput, toAsk } from './ask-schema.ts';

export const listAsks = defineOperation({
  name: 'asks_list',
  summary: 'List asks, newest first: of a task, addressed to you (`to=me`), or that you asked (`asked_by=me`).',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'tasks',
  http: { method: 'GET', path: '/asks' },
  input: z.strictObject({
    task_id: taskId.optional(),
    to: z.string().min(1).max(64).optional(),
    asked_by: z.string().min(1).max(64).optional(),
    status: namesFilter(ASK_STATUSES, 'ask statuses'),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(askOutput),
  async run(db, ctx, input) {
    const me = (who: string | undefined) => (who === 'me' ? ctx.actor.id : who);
    const beforeId = ctx.cursors.decode('asks', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listAskRows(db, { taskId: input.task_id, toId: me(input.to), askedById: me(input.asked_by), statuses: input.status, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('asks', row.id));
    return { data: page.rows.map(toAsk), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
