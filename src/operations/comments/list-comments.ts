import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listComments as listCommentRows } from '../../store/comments.ts';
import { tasksEverExisted } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate, sinceParam, sinceSeq } from '../shared/lists.ts';
import { taskNotFound } from '../tasks/get-task.ts';
import { taskId } from '../tasks/task-schema.ts';
import { commentOutput, toComment } from './comment-schema.ts';

export const listComments = defineOperation({
  name: 'comments_list',
  summary: "Read a task's comments, oldest first, in bounded pages; or only those changed since an event.",
  description: 'A deleted comment keeps its place (`body` null, `deleted_at` set). Readable after the task is deleted.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/tasks/{id}/comments' },
  input: z.strictObject({ id: taskId, cursor: cursorParam, limit: limitParam, since: sinceParam }),
  output: pageSchema(commentOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('comments', input.cursor);
    const syncCursor = await latestEventId(db);
    if (!(await tasksEverExisted(db, [input.id])).has(input.id)) throw taskNotFound(input.id);
    let changedAfterSeq: string | undefined;
    if (input.since) {
      changedAfterSeq = await sinceSeq(db, input.since);
    }
    const rows = await listCommentRows(db, { taskId: input.id, afterId, changedAfterSeq, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('comments', row.id));
    return { data: page.rows.map((row) => toComment(row)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
