import { z } from 'zod';
import { updateSchedule } from '../../store/schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { lockChangeableSchedule, scheduleId, scheduleOutput, toSchedule } from './schedule-schema.ts';

export const deleteSchedule = defineOperation({
  name: 'schedules_delete',
  summary: 'Delete a schedule: it makes no more tasks; the tasks it made stay.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'DELETE', path: '/schedules/{id}' },
  input: z.strictObject({ id: scheduleId }),
  output: scheduleOutput,
  async run(tx, ctx, input) {
    const row = await lockChangeableSchedule(tx, ctx, input.id);
    const deleted = await updateSchedule(tx, row.id, { enabled: false, deleted_at: ctx.now, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'schedule.deleted', subject: row.id, data: { name: row.name } });
    return toSchedule(deleted);
  },
});
