import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import { TASK_STATUSES } from '../../domain/task-status.ts';
import { latestEventId } from '../../store/events.ts';
import { listTasks as listTaskRows } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { commaList, commaSeparated, cursorParam, decodeCursor, limitParam, pageSchema, paginate, sinceParam, sinceSeq, viewParam } from '../shared/lists.ts';
import { shapeTask } from './task-view.ts';
import { TASK_FIELDS, taskLabels, taskOutput } from './task-schema.ts';

export const listTasks = defineOperation({
  name: 'tasks_list',
  summary: 'List tasks, newest first, in bounded pages; filter by status, labels and assignee, or get only what changed since an event.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  http: { method: 'GET', path: '/tasks' },
  input: z.strictObject({
    status: commaList(TASK_STATUSES, 'statuses'),
    labels: commaSeparated
      .pipe(taskLabels)
      .optional()
      .describe('Comma-separated labels; a task must carry all of them.'),
    assignee: z
      .string()
      .regex(new RegExp(`^(me|none|${idPattern('agt').replace(/^\^|\$$/g, '')})$`), 'assignee is me, none, or a principal id (agt_…)')
      .optional()
      .describe('`me`: tasks assigned to you; `none`: unassigned tasks; `agt_…`: tasks assigned to that principal.'),
    blocked_reason: z.enum(['attempts_exhausted']).optional().describe('`attempts_exhausted`: the dead-letter view, tasks that ran out of attempts.'),
    cursor: cursorParam,
    limit: limitParam,
    view: viewParam,
    fields: commaList(TASK_FIELDS, 'task fields'),
    since: sinceParam,
  }),
  output: pageSchema(taskOutput),
  async run(db, ctx, input) {
    // Read the sync cursor first: a write landing during the list shows again next time, never goes missing.
    const syncCursor = await latestEventId(db);
    let changedAfterSeq: string | undefined;
    if (input.since) {
      changedAfterSeq = await sinceSeq(db, input.since);
    }
    const rows = await listTaskRows(db, {
      statuses: input.status,
      labels: input.labels,
      assignee: input.assignee === 'me' ? ctx.actor.id : input.assignee === 'none' ? null : input.assignee,
      blockedReason: input.blocked_reason,
      changedAfterSeq,
      beforeId: decodeCursor('tasks', input.cursor),
      limit: input.limit,
    });
    const page = paginate(rows, input.limit, 'tasks', (row) => row.id);
    return {
      data: page.rows.map((row) => shapeTask(row, ctx.actor, input, true)),
      has_more: page.has_more,
      next_cursor: page.next_cursor,
      sync_cursor: syncCursor,
    };
  },
});
