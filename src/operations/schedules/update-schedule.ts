import { z } from 'zod';
import { nextRun } from '../../domain/schedule-plan.ts';
import { updateSchedule as writeSchedule } from '../../store/schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { resolveAssignee } from '../shared/principals.ts';
import { catchUpParam, checkCron, checkScheduledTemplate, cronParam, lockChangeableSchedule, overlapParam, scheduledTask, scheduledTemplate, scheduleId, scheduleOutput, timeZoneParam, toSchedule } from './schedule-schema.ts';

export const updateSchedule = defineOperation({
  name: 'schedules_update',
  summary: 'Change a schedule: its expression, zone, task or template, policies, or pause it (enabled: false) and resume it.',
  description: 'A new expression or zone, or resuming, plans from now (occurrences while paused are not made up); tasks already made stay.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/schedules/{id}' },
  input: z
    .strictObject({
      id: scheduleId,
      name: z.string().trim().min(1).max(200).optional(),
      cron: cronParam.optional(),
      time_zone: timeZoneParam.optional(),
      task: scheduledTask.optional(),
      template: scheduledTemplate.optional(),
      overlap: overlapParam.optional(),
      catch_up: catchUpParam.optional(),
      enabled: z.boolean().optional(),
    })
    .refine((input) => input.task === undefined || input.template === undefined, { message: 'send task or template, not both', path: ['task'] }),
  output: scheduleOutput,
  version: (schedule) => schedule.version,
  async run(tx, ctx, input) {
    const row = await lockChangeableSchedule(tx, ctx, input.id);
    const { id: _id, ...given } = input;
    const cron = given.cron ?? row.cron;
    const timeZone = given.time_zone ?? row.time_zone;
    checkCron(cron, timeZone);
    if (given.task?.assignee !== undefined) await resolveAssignee(tx, given.task.assignee, '/task/assignee');
    if (given.template) await checkScheduledTemplate(tx, given.template);
    const replans = given.cron !== undefined || given.time_zone !== undefined || (given.enabled === true && !row.enabled);
    // A schedule makes a task or a template's graph: giving one drops the other.
    const made = given.task ? { task: given.task, template: null } : given.template ? { template: given.template, task: null } : {};
    const changed = Object.fromEntries(Object.entries({ ...given, ...made }).filter(([key, value]) => value !== undefined && JSON.stringify(value) !== JSON.stringify(row[key as keyof typeof row])));
    const updated = await writeSchedule(tx, row.id, {
      ...changed,
      ...(replans ? { next_run_at: nextRun(cron, timeZone, ctx.now), held_at: null } : {}),
      updated_at: ctx.now,
      updated_by_id: ctx.actor.id,
      updated_by_kind: ctx.actor.kind,
    });
    ctx.emit({ type: 'schedule.updated', subject: row.id, data: { changes: changed } });
    return toSchedule(updated);
  },
});
