import { z } from 'zod';
import { priorityRank } from '../../domain/task-priority.ts';
import { insertTask } from '../../store/tasks.ts';
import { insertTaskRequirements } from '../../store/reservations.ts';
import { reservationRequirements } from '../reservations/task-reservations.ts';
import { defineOperation } from '../define-operation.ts';
import { shapeTask } from './task-view.ts';
import { resolveAssignee } from '../shared/principals.ts';
import { assigneeParam, maxAttemptsParam, blockedBy, parentParam, taskDescription, taskLabels, compactTaskOutput, taskPriority, taskTitle, timeParam } from './task-schema.ts';
import { checkParent } from './task-tree.ts';
import { checkBlockers } from './blockers.ts';
import { applyMaxCost, maxCostCurrencyParam, maxCostParam, requestedMaxCost } from '../budgets/task-max-cost.ts';

export const createTask = defineOperation({
  name: 'tasks_create',
  summary: 'Create a task in `todo`.',
  description: 'Long text belongs in an artifact, not the description.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'POST', path: '/tasks', successStatus: 201 },
  input: z.strictObject({
    title: taskTitle,
    description: taskDescription.default(''),
    priority: taskPriority.default('normal'),
    labels: taskLabels.default([]),
    blocked_by: blockedBy.default([]).describe('Tasks that must be done before this one can be claimed.'),
    assignee: assigneeParam.optional(),
    max_attempts: maxAttemptsParam.optional(),
    parent_id: parentParam.optional(),
    not_before: timeParam('not_before').optional(),
    due_at: timeParam('due_at').optional(),
    reservations: reservationRequirements.optional(),
    max_cost: maxCostParam.optional(),
    max_cost_currency: maxCostCurrencyParam.optional(),
  }),
  output: compactTaskOutput,
  version: (task) => task.version ?? 1,
  async run(tx, ctx, input) {
    // The tree lock before the blocker-graph lock, as in tasks_update.
    if (input.parent_id !== undefined) await checkParent(tx, undefined, input.parent_id);
    await checkBlockers(tx, undefined, input.blocked_by);
    const assignee = input.assignee === undefined ? undefined : await resolveAssignee(tx, input.assignee);
    const none = { micros: null, currency: null };
    const maxCost = requestedMaxCost(none, input);
    const row = await insertTask(tx, {
      id: ctx.ids.make('tsk'),
      title: input.title,
      description: input.description,
      status: 'todo',
      priority: priorityRank(input.priority),
      labels: input.labels,
      blocked_by: input.blocked_by,
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
      assignee_id: assignee?.id ?? null,
      assignee_kind: assignee?.kind ?? null,
      max_attempts: input.max_attempts ?? null,
      parent_id: input.parent_id ?? null,
      not_before: input.not_before ?? null,
      due_at: input.due_at ?? null,
      max_cost_micros: maxCost.micros,
      max_cost_currency: maxCost.currency,
    });
    await applyMaxCost(tx, ctx, row.id, none, maxCost);
    if (input.reservations?.length) await insertTaskRequirements(tx, row.id, input.reservations);
    ctx.emit({
      type: 'task.created',
      subject: row.id,
      data: { title: input.title, description: input.description, status: 'todo', priority: input.priority, labels: input.labels, blocked_by: input.blocked_by, ...schedule(input), ...(input.reservations?.length ? { reservations: input.reservations } : {}), ...(assignee ? { assignee: { id: assignee.id, kind: assignee.kind } } : {}) },
    });
    if (assignee) ctx.emit({ type: 'task.assigned', subject: row.id, data: { from: null, to: { id: assignee.id, kind: assignee.kind } } });
    // The row was read back before its requirements were written.
    return shapeTask(input.reservations?.length ? { ...row, reservations: input.reservations } : row, ctx.actor, { view: 'compact', at: ctx.now });
  },
});

/** The tree and schedule fields a `task.created` event carries, when set. */
function schedule(input: { parent_id?: string | undefined; not_before?: Date | undefined; due_at?: Date | undefined }): Record<string, string> {
  const set: Record<string, string> = {};
  if (input.parent_id !== undefined) set.parent_id = input.parent_id;
  if (input.not_before !== undefined) set.not_before = input.not_before.toISOString();
  if (input.due_at !== undefined) set.due_at = input.due_at.toISOString();
  return set;
}
