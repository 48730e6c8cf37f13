import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findCompactTask, findTask } from '../../store/tasks.ts';
import { discussions } from '../comments/discussion.ts';
import { defineOperation } from '../define-operation.ts';
import { namesFilter, viewParam } from '../shared/lists.ts';
import { shapeTask, toCompactTask } from './task-view.ts';
import { TASK_FIELDS, taskId, taskOutput } from './task-schema.ts';

export const getTask = defineOperation({
  name: 'tasks_get',
  summary: 'Read one task, with its legal transitions and your next actions.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/tasks/{id}' },
  input: z.strictObject({ id: taskId, view: viewParam, fields: namesFilter(TASK_FIELDS, 'task fields') }),
  output: taskOutput,
  version: (task) => task.version ?? 0,
  async run(db, ctx, input) {
    // The default view reads only the columns it shows, not the whole row (bench/README.md, issue 21).
    if (input.view === 'compact' && !input.fields) {
      const row = await findCompactTask(db, input.id);
      if (!row) throw taskNotFound(input.id);
      return toCompactTask(row, ctx.actor, ctx.now);
    }
    const row = await findTask(db, input.id);
    if (!row) throw taskNotFound(input.id);
    const task = shapeTask(row, ctx.actor, { ...input, now: ctx.now, at: ctx.now });
    // The resume step reads the task: the full view carries what humans said, as a claim does.
    if (input.fields ? input.fields.includes('discussion') : input.view === 'full') task.discussion = (await discussions(db, [row])).get(row.id);
    return task;
  },
});

export function taskNotFound(id: string): BatonError {
  return new BatonError('not_found', `No task ${id}.`, { hint: 'List tasks with [[tasks_list]] to find existing ids.' });
}
