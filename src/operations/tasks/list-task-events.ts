import { z } from 'zod';
import { taskEverExisted } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { eventListParams } from '../events/event-params.ts';
import { eventPage } from '../events/event-page.ts';
import { eventOutput } from '../events/event-schema.ts';
import { pageSchema } from '../shared/lists.ts';
import { taskNotFound } from './get-task.ts';
import { taskId } from './task-schema.ts';

export const listTaskEvents = defineOperation({
  name: 'tasks.events',
  summary: "Read one task's history: every event about it, in commit order (still readable after the task is deleted).",
  kind: 'read',
  scope: 'events:read',
  approval: 'none',
  http: { method: 'GET', path: '/tasks/{id}/events' },
  input: z.strictObject({ id: taskId, ...eventListParams }),
  output: pageSchema(eventOutput),
  async run(db, _ctx, input) {
    if (!(await taskEverExisted(db, input.id))) throw taskNotFound(input.id);
    return eventPage(db, input.id, input);
  },
});
