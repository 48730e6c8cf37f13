import { z } from 'zod';
import { findSchedule } from '../../store/schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { scheduleId, scheduleNotFound, scheduleOutput, toSchedule } from './schedule-schema.ts';

export const getSchedule = defineOperation({
  name: 'schedules_get',
  summary: 'Read one schedule, with its next five occurrences and the task it made last.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/schedules/{id}' },
  input: z.strictObject({ id: scheduleId }),
  output: scheduleOutput,
  version: (schedule) => schedule.version,
  async run(db, _ctx, input) {
    const row = await findSchedule(db, input.id);
    if (!row) throw scheduleNotFound(input.id);
    return toSchedule(row);
  },
});
