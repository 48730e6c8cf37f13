import { z } from 'zod';
import type { ActorKind } from '../../domain/scopes.ts';
import { checkTemplate, PARAMETER_TYPES, PARAMETER_VALUE_MAX, TEMPLATE_PARAMETERS_MAX, TEMPLATE_TASKS_MAX, type TemplateIssue, type TemplateParameter, type TemplateTask } from '../../domain/templates.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import { lockTemplate, type TemplateRow } from '../../store/templates.ts';
import type { Tx } from '../../store/connection.ts';
import type { OperationContext } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { actorRef, BLOCKER_CHAIN_MAX, BLOCKERS_MAX, LABELS_MAX, TREE_DEPTH_MAX, taskDescription, taskPriority, taskTitle } from '../tasks/task-schema.ts';

export const templateId = z.string().regex(new RegExp(idPattern('tpl')), 'must be a template id: tpl_ followed by a 26-character ULID');

/** Offsets from the instantiation: at most a year. */
const OFFSET_MAX_S = 366 * 86_400;
const taskKey = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,39}$/, 'a key is 1–40 lowercase letters, digits, _ and -');

export const templateParameter = z.strictObject({
  name: z.string().regex(/^[a-z_][a-z0-9_]{0,39}$/, 'a parameter name is 1–40 lowercase letters, digits and _, not starting with a digit'),
  type: z.enum(PARAMETER_TYPES).default('string'),
  values: z.array(z.string().min(1).max(100)).min(1).max(50).optional(),
  required: z.boolean().default(true),
  default: z.union([z.string().max(PARAMETER_VALUE_MAX), z.number()]).optional(),
  description: z.string().max(200).optional(),
});

export const templateTask = z.strictObject({
  key: taskKey,
  title: taskTitle,
  description: taskDescription.default(''),
  priority: taskPriority.default('normal'),
  labels: z.array(z.string().min(1).max(50)).max(LABELS_MAX).default([]),
  assignee: z.string().min(1).max(60).optional(),
  parent: taskKey.optional(),
  blocked_by: z.array(taskKey).max(BLOCKERS_MAX).default([]),
  not_before_s: z.int().min(0).max(OFFSET_MAX_S).optional().describe('Timer gate, seconds after instantiation.'),
  due_s: z.int().min(0).max(OFFSET_MAX_S).optional(),
  approval: z.boolean().default(false).describe('Approval gate: created in review for a human.'),
});

/** Without defaults, so an update that leaves them out keeps them (Zod fills a default even under optional()). */
export const templateParameters = z.array(templateParameter).max(TEMPLATE_PARAMETERS_MAX);
export const templateTasks = z.array(templateTask).min(1).max(TEMPLATE_TASKS_MAX, `at most ${TEMPLATE_TASKS_MAX} tasks`);
export const templateName = z.string().trim().min(1).max(200);
export const templateDescription = z.string().max(4000);

export const templateOutput = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  // As templates_create took them (its input schema says each member): the OpenAPI document has a size budget.
  parameters: z.array(z.record(z.string(), z.unknown())).max(TEMPLATE_PARAMETERS_MAX),
  tasks: z.array(z.record(z.string(), z.unknown())).max(TEMPLATE_TASKS_MAX),
  version: z.int(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
  updated_at: z.iso.datetime(),
  updated_by: actorRef,
});

export function toTemplate(row: TemplateRow): z.infer<typeof templateOutput> {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    parameters: row.parameters as Record<string, unknown>[],
    tasks: row.tasks as Record<string, unknown>[],
    version: row.version,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_at: row.updated_at.toISOString(),
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
  };
}

/** Refuses a definition `checkTemplate` finds wrong: a cycle or depth with the task graph's own codes, anything else validation_failed. */
export function assertTemplate(parameters: readonly TemplateParameter[], tasks: readonly TemplateTask[]): void {
  const issues = checkTemplate(parameters, tasks, { depth: TREE_DEPTH_MAX, chain: BLOCKER_CHAIN_MAX });
  const graph = issues.find((issue) => issue.kind !== undefined);
  if (graph?.kind === 'blocked_by_cycle' || graph?.kind === 'parent_cycle') {
    throw new BatonError(graph.kind, `In this template ${graph.detail}.`, { extra: { cycle: [...(graph.cycle ?? [])], errors: [problemEntry(graph)] } });
  }
  if (graph?.kind === 'parent_too_deep' || graph?.kind === 'blocked_by_too_deep') {
    throw new BatonError(graph.kind, `In this template ${graph.detail}.`, { extra: { limit: graph.kind === 'parent_too_deep' ? TREE_DEPTH_MAX : BLOCKER_CHAIN_MAX, errors: [problemEntry(graph)] } });
  }
  if (issues.length > 0) throw invalid(issues, 'The template is not consistent');
}

/** validation_failed listing each issue at its pointer. */
export function invalid(issues: readonly TemplateIssue[], what: string): BatonError {
  return new BatonError('validation_failed', `${what}: ${issues.slice(0, 5).map((i) => `${i.pointer} ${i.detail}`).join('; ')}.`, { extra: { errors: issues.slice(0, 100).map(problemEntry) } });
}

function problemEntry(issue: TemplateIssue): { pointer: string; detail: string; location: 'body' } {
  return { pointer: issue.pointer, detail: issue.detail, location: 'body' };
}

/** Templates are shared: anyone who may create tasks may change one, if it is at the version they name. */
export async function lockChangeableTemplate(tx: Tx, ctx: OperationContext, id: string): Promise<TemplateRow> {
  const row = await lockTemplate(tx, id);
  if (!row) throw templateNotFound(id);
  assertVersion(`Template ${row.id}`, row.version, ctx.expectedVersion);
  return row;
}

export function templateNotFound(id: string): BatonError {
  return new BatonError('not_found', `No template ${id}.`, { hint: '[[templates_list]] lists the templates that exist.' });
}
