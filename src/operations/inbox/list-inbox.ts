import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { inboxCounts as countInbox, listInbox as listInboxRows } from '../../store/inbox.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, namesFilter, pageSchema, paginate } from '../shared/lists.ts';
import { taskId } from '../tasks/task-schema.ts';
import { INBOX_KINDS, INBOX_STATES } from '../../domain/inbox-kinds.ts';
import { inboxCounts, inboxItemOutput, toInboxItem } from './inbox-schema.ts';

export const listInbox = defineOperation({
  name: 'inbox_list',
  summary: 'Your inbox, newest first: asks to you, answers to yours, mentions, review decisions, assignments; with counts by state.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'tasks',
  http: { method: 'GET', path: '/inbox' },
  input: z.strictObject({
    state: namesFilter(INBOX_STATES, 'inbox states'),
    kind: namesFilter(INBOX_KINDS, 'inbox kinds'),
    task_id: taskId.optional(),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(inboxItemOutput).extend({ counts: inboxCounts }),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('inbox', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listInboxRows(db, { principalId: ctx.actor.id, states: input.state, kinds: input.kind, taskId: input.task_id, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('inbox', row.id));
    return { data: page.rows.map(toInboxItem), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor, counts: await countInbox(db, ctx.actor.id) };
  },
});
