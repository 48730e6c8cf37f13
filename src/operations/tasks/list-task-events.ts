import type { Kysely } from 'kysely';
import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import type { DB } from '../../store/schema.ts';
import { tasksEverExisted } from '../../store/tasks.ts';
import { defineOperation } from '../define-operation.ts';
import { eventListParams } from '../events/event-params.ts';
import { type EventPageInput, eventPages } from '../events/event-page.ts';
import type { Cursors } from '../shared/cursors.ts';
import { eventOutput } from '../events/event-schema.ts';
import { pageSchema } from '../shared/lists.ts';
import { taskNotFound } from './get-task.ts';
import { taskId } from './task-schema.ts';

export const listTaskEvents = defineOperation({
  name: 'tasks_events',
  summary: "Read one task's history: every event about it, in commit order (still readable after the task is deleted).",
  kind: 'read',
  scope: 'events:read',
  approval: 'none',
  http: { method: 'GET', path: '/tasks/{id}/events' },
  input: z.strictObject({ id: taskId, ...eventListParams }),
  output: pageSchema(eventOutput),
  async run(db, ctx, input) {
    const [page] = await histories(db, ctx.cursors, { ...input, ids: [input.id] });
    if (page === undefined || page instanceof BatonError) throw page ?? taskNotFound(input.id);
    return page;
  },
  runBatch: (db, ctx, input, ids) => histories(db, ctx.cursors, { ...input, ids }),
});

/** Each task's history page, in `ids` order; three queries whatever the count: which tasks exist, the window, the pages. */
async function histories(db: Kysely<DB>, cursors: Cursors, input: EventPageInput & { ids: readonly string[] }) {
  const { ids } = input;
  const known = await tasksEverExisted(db, ids);
  const pages = await eventPages(db, cursors, { ...input, subjects: ids.filter((id) => known.has(id)) });
  let next = 0;
  return ids.map((id) => (known.has(id) ? (pages[next++] ?? taskNotFound(id)) : taskNotFound(id)));
}
