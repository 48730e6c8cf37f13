import { z } from 'zod';
import { cronOf, nextRuns, OVERLAPS } from '../../domain/schedule-plan.ts';
import type { ActorKind } from '../../domain/scopes.ts';
import type { Principal } from '../../domain/principal.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import { lockSchedule, type ScheduleRow } from '../../store/schedules.ts';
import type { Tx } from '../../store/connection.ts';
import type { OperationContext } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { actorRef, assigneeParam, maxAttemptsParam, taskDescription, taskLabels, taskPriority, taskTitle } from '../tasks/task-schema.ts';
import { resolveParameters, type TemplateParameter } from '../../domain/templates.ts';
import { findTemplate } from '../../store/templates.ts';
import type { ScheduledTemplate } from '../../store/schema.ts';
import { templateParams } from '../templates/instantiate-template.ts';
import { invalid, templateId } from '../templates/template-schema.ts';

export const scheduleId = z.string().regex(new RegExp(idPattern('sch')), 'must be a schedule id: sch_ followed by a 26-character ULID');

/** The task each occurrence creates: what tasks_create takes, less what only one task can have (parent, blockers, dates). */
export const scheduledTask = z.strictObject({
  title: taskTitle,
  description: taskDescription.default(''),
  priority: taskPriority.default('normal'),
  labels: taskLabels.default([]),
  assignee: assigneeParam.optional(),
  max_attempts: maxAttemptsParam.optional(),
});

/** The template each occurrence instantiates, whole, with these parameters. */
export const scheduledTemplate = z.strictObject({ id: templateId, params: templateParams.optional() }).describe('Instead of task: make this template\'s whole graph each time.');

export const cronParam = z.string().trim().min(9).max(120).describe("Five-field cron expression, e.g. '0 9 * * 1-5' (09:00 on weekdays).");
export const timeZoneParam = z.string().min(1).max(64).describe("IANA time zone the expression is read in, e.g. 'Europe/Berlin'.");
export const overlapParam = z.enum(OVERLAPS).describe('While the last task is open: skip, coalesce (create one when it closes) or create anyway.');
export const catchUpParam = z.int().min(0).max(100).describe('After downtime, how many missed occurrences to create (the latest); 0 skips them.');

const PREVIEW = 5;

export const scheduleOutput = z.object({
  id: z.string(),
  name: z.string(),
  cron: z.string(),
  time_zone: z.string(),
  task: z.record(z.string(), z.unknown()).nullable().describe('null: the schedule makes `template`.'),
  template: z.object({ id: z.string(), params: z.record(z.string(), z.unknown()).optional() }).nullable(),
  overlap: z.enum(OVERLAPS),
  catch_up: z.int(),
  enabled: z.boolean(),
  next_runs: z.array(z.iso.datetime()).max(PREVIEW).describe('The next occurrences (up to 5); empty while disabled.'),
  held: z.iso.datetime().nullable().describe('An occurrence held back (coalesce) until the last task closes.'),
  last_run_at: z.iso.datetime().nullable(),
  last_task_id: z.string().nullable(),
  version: z.int(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
  updated_at: z.iso.datetime(),
  updated_by: actorRef,
});

export function toSchedule(row: ScheduleRow): z.infer<typeof scheduleOutput> {
  const upcoming = row.enabled && row.next_run_at ? [row.next_run_at, ...nextRuns(row.cron, row.time_zone, row.next_run_at, PREVIEW - 1)] : [];
  return {
    id: row.id,
    name: row.name,
    cron: row.cron,
    time_zone: row.time_zone,
    task: row.task as Record<string, unknown> | null,
    template: row.template,
    overlap: row.overlap,
    catch_up: row.catch_up,
    enabled: row.enabled,
    next_runs: upcoming.map((at) => at.toISOString()),
    held: row.held_at?.toISOString() ?? null,
    last_run_at: row.last_run_at?.toISOString() ?? null,
    last_task_id: row.last_task_id,
    version: row.version,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_at: row.updated_at.toISOString(),
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
  };
}

/**
 * A schedule's template must exist and its parameters fit it (400 validation_failed at
 * `/template/…`); principals a parameter names are resolved at each occurrence, as they are then.
 */
export async function checkScheduledTemplate(tx: Tx, template: ScheduledTemplate): Promise<void> {
  const found = await findTemplate(tx, template.id);
  if (!found) {
    throw new BatonError('validation_failed', `No template ${template.id}.`, {
      hint: '[[templates_list]] lists the templates that exist.',
      extra: { errors: [{ pointer: '/template/id', detail: 'no such template', location: 'body' }] },
    });
  }
  const { issues } = resolveParameters(found.parameters as TemplateParameter[], template.params ?? {});
  if (issues.length > 0) throw invalid(issues.map((issue) => ({ ...issue, pointer: `/template${issue.pointer}` })), `The parameters do not fit template ${found.id}`);
}

/** Throws `validation_failed` at the member that is wrong when the expression or the zone cannot be read. */
export function checkCron(cron: string, timeZone: string): void {
  if (!zoneKnown(timeZone)) {
    throw new BatonError('validation_failed', `Unknown time zone "${timeZone}".`, {
      hint: "Name an IANA time zone, such as 'UTC', 'Europe/Berlin' or 'America/New_York'.",
      extra: { errors: [{ pointer: '/time_zone', detail: 'an IANA time zone', location: 'body' }] },
    });
  }
  try {
    cronOf(cron, timeZone);
  } catch (error) {
    throw new BatonError('validation_failed', `The cron expression "${cron}" cannot be read: ${error instanceof Error ? error.message : String(error)}`, {
      hint: "Give five fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5'.",
      extra: { errors: [{ pointer: '/cron', detail: 'a five-field cron expression', location: 'body' }] },
    });
  }
}

function zoneKnown(timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone });
    return true;
  } catch {
    return false;
  }
}

/** A schedule is its creator's to change, or any human's or agent admin's. */
function mayChangeSchedule(actor: Principal, row: Pick<ScheduleRow, 'created_by_id'>): boolean {
  return row.created_by_id === actor.id || actor.kind === 'human' || actor.scopes.has('agents:admin');
}

/** The schedule locked for a change by the caller: not_found, conflict_version or not_schedule_owner otherwise. */
export async function lockChangeableSchedule(tx: Tx, ctx: OperationContext, id: string): Promise<ScheduleRow> {
  const row = await lockSchedule(tx, id);
  if (!row) throw scheduleNotFound(id);
  assertVersion(`Schedule ${row.id}`, row.version, ctx.expectedVersion);
  if (!mayChangeSchedule(ctx.actor, row)) throw new BatonError('not_schedule_owner', `Schedule ${row.id} is ${row.created_by_kind} ${row.created_by_id}'s.`);
  return row;
}

export function scheduleNotFound(id: string): BatonError {
  return new BatonError('not_found', `No schedule ${id}.`, { hint: '[[schedules_list]] lists the schedules that exist.' });
}
