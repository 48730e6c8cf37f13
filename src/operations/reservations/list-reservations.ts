import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listReservations as listReservationRows } from '../../store/reservations.ts';
import { defineOperation } from '../define-operation.ts';
import { taskId } from '../tasks/task-schema.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { reservationOutput, toReservation } from './reservation-schema.ts';

export const listReservations = defineOperation({
  name: 'reservations_list',
  summary: 'List reservations, oldest first: who holds what, until when.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/reservations' },
  input: z.strictObject({
    resource: z.string().max(200).optional(),
    repo: z.string().max(200).optional(),
    holder: z.string().min(1).max(64).optional().describe('`me`, or a principal id.'),
    task_id: taskId.optional().describe('Only those taken for this task.'),
    state: z.enum(['active', 'all']).default('active'),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(reservationOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('reservations', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listReservationRows(db, {
      afterId,
      limit: input.limit,
      liveAt: input.state === 'active' ? ctx.now : undefined,
      resource: input.resource,
      repo: input.repo,
      holderId: input.holder === 'me' ? ctx.actor.id : input.holder,
      taskId: input.task_id,
    });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('reservations', row.id));
    return { data: page.rows.map((row) => toReservation(row, ctx.now)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
