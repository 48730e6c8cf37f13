import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listSchedules as listScheduleRows } from '../../store/schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { scheduleOutput, toSchedule } from './schedule-schema.ts';

export const listSchedules = defineOperation({
  name: 'schedules_list',
  summary: 'List schedules of recurring work, oldest first.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/schedules' },
  input: z.strictObject({ cursor: cursorParam, limit: limitParam }),
  output: pageSchema(scheduleOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('schedules', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listScheduleRows(db, { afterId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('schedules', row.id));
    return { data: page.rows.map(toSchedule), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
