import { z } from 'zod';
import { nextRun } from '../../domain/schedule-plan.ts';
import { resolveAssignee } from '../shared/principals.ts';
import { insertSchedule } from '../../store/schedules.ts';
import { defineOperation } from '../define-operation.ts';
import { catchUpParam, checkCron, checkScheduledTemplate, cronParam, overlapParam, scheduledTask, scheduledTemplate, scheduleOutput, timeZoneParam, toSchedule } from './schedule-schema.ts';

export const createSchedule = defineOperation({
  name: 'schedules_create',
  summary: 'Create recurring work: a task made from `task`, or a template\'s graph, at each occurrence of a cron expression in a time zone.',
  description: 'Each occurrence creates one task or graph (by you), once across instances and restarts. `next_runs` previews the next five.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/schedules', successStatus: 201 },
  input: z
    .strictObject({
      name: z.string().trim().min(1).max(200),
      cron: cronParam,
      time_zone: timeZoneParam.default('UTC'),
      task: scheduledTask.optional(),
      template: scheduledTemplate.optional(),
      overlap: overlapParam.default('skip'),
      catch_up: catchUpParam.default(0),
      enabled: z.boolean().default(true),
    })
    .refine((input) => (input.task === undefined) !== (input.template === undefined), { message: 'send task or template, not both', path: ['task'] }),
  output: scheduleOutput,
  version: (schedule) => schedule.version,
  async run(tx, ctx, input) {
    checkCron(input.cron, input.time_zone);
    if (input.task?.assignee !== undefined) await resolveAssignee(tx, input.task.assignee, '/task/assignee');
    if (input.template) await checkScheduledTemplate(tx, input.template);
    const by = { id: ctx.actor.id, kind: ctx.actor.kind };
    const row = await insertSchedule(tx, {
      id: ctx.ids.make('sch'),
      name: input.name,
      cron: input.cron,
      time_zone: input.time_zone,
      task: input.task ?? null,
      template: input.template ?? null,
      overlap: input.overlap,
      catch_up: input.catch_up,
      enabled: input.enabled,
      next_run_at: nextRun(input.cron, input.time_zone, ctx.now),
      held_at: null,
      last_run_at: null,
      last_task_id: null,
      owner_token_id: ctx.actor.tokenId,
      deleted_at: null,
      created_at: ctx.now,
      created_by_id: by.id,
      created_by_kind: by.kind,
      updated_at: ctx.now,
      updated_by_id: by.id,
      updated_by_kind: by.kind,
    });
    ctx.emit({ type: 'schedule.created', subject: row.id, data: { name: row.name, cron: row.cron, time_zone: row.time_zone, overlap: row.overlap, catch_up: row.catch_up } });
    return toSchedule(row);
  },
});
