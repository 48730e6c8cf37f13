import { z } from 'zod';
import { priorityFromRank, priorityRank } from '../../domain/task-priority.ts';
import {
  illegalTransitionHint,
  isLegalTransition,
  type TaskStatus,
  TRANSITIONS,
  transitionGuard,
  transitionVia,
} from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import type { Principal } from '../../service/principal.ts';
import { lockTask, type TaskChanges, type TaskRow, updateTask as updateTaskRow } from '../../store/tasks.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { taskNotFound } from './get-task.ts';
import { shapeTask } from './task-view.ts';
import { taskDescription, taskId, taskLabels, taskOutput, taskPriority, taskStatus, taskTitle } from './task-schema.ts';

const updateInput = z
  .strictObject({
    id: taskId,
    title: taskTitle.optional(),
    description: taskDescription.optional(),
    priority: taskPriority.optional(),
    labels: taskLabels.optional(),
    status: taskStatus.optional(),
  })
  .refine((input) => Object.keys(input).length > 1, 'send at least one of title, description, priority, labels, status');
type UpdateInput = z.output<typeof updateInput>;

export const updateTask = defineOperation({
  name: 'tasks.update',
  summary: 'Change a task: title, description, priority, labels and/or status (validated against the state machine).',
  description:
    'Send If-Match with the ETag you read to avoid overwriting a change you have not seen. A status change must be one of the task\'s `legal_transitions`; claiming and releasing have their own operations.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  http: { method: 'PATCH', path: '/tasks/{id}' },
  input: updateInput,
  output: taskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    const row = await lockTask(tx, input.id);
    if (!row) throw taskNotFound(input.id);
    checkVersion(row, ctx.expectedVersion);
    if (input.status !== undefined && input.status !== row.status) checkTransition(row, input.status, ctx.actor);

    const changes = diff(row, input);
    const changed = Object.keys(changes);
    // Nothing differs: no write, no event, no new version.
    if (changed.length === 0) return shapeTask(row, ctx.actor, { view: 'compact' });

    const updated = await updateTaskRow(tx, row.id, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    emitEvents(ctx, row, changes);
    return shapeTask(updated, ctx.actor, { view: 'compact' });
  },
});

function checkVersion(row: TaskRow, expected: number | undefined): void {
  if (expected === undefined || expected === row.version) return;
  throw new BatonError('conflict_version', `Task ${row.id} is at version ${row.version}; your If-Match said ${expected}.`, {
    extra: { current_version: row.version },
    headers: { etag: `"${row.version}"` },
  });
}

function checkTransition(row: TaskRow, to: TaskStatus, actor: Principal): void {
  const from = row.status as TaskStatus;
  const legal = [...TRANSITIONS[from]];
  if (!isLegalTransition(from, to)) {
    throw new BatonError('invalid_transition', `Task ${row.id} is ${from}; it cannot move to ${to}.`, {
      hint: illegalTransitionHint(from, to),
      extra: { legal_transitions: legal, current_status: from },
    });
  }
  const via = transitionVia(from, to);
  if (via !== 'tasks.update') {
    throw new BatonError('invalid_transition', `Task ${row.id} moves from ${from} to ${to} only through ${via}, not a status update.`, {
      hint: via === 'tasks.claim' ? `Claim it: POST /api/v1/tasks/${row.id}/claim.` : 'Release your lease: POST /api/v1/leases/{lease_id}/release.',
      extra: { legal_transitions: legal, current_status: from, operation: via },
    });
  }
  const guard = transitionGuard(from, to);
  if (guard === 'human' && actor.kind !== 'human') {
    throw new BatonError('human_required', `Only a human may move task ${row.id} from ${from} to ${to}.`);
  }
  if (guard === 'human_or_reviewer' && actor.kind !== 'human' && !actor.scopes.has('tasks:review')) {
    throw new BatonError('forbidden_scope', `Moving task ${row.id} from ${from} to ${to} needs a human or scope tasks:review.`, {
      hint: 'Leave the task in in_review for a human, or use a token with scope tasks:review.',
      extra: { required_scope: 'tasks:review' },
    });
  }
}

function diff(row: TaskRow, input: UpdateInput): TaskChanges {
  const changes: TaskChanges = {};
  if (input.title !== undefined && input.title !== row.title) changes.title = input.title;
  if (input.description !== undefined && input.description !== row.description) changes.description = input.description;
  if (input.priority !== undefined && priorityRank(input.priority) !== row.priority) changes.priority = priorityRank(input.priority);
  if (input.labels !== undefined && input.labels.join('\n') !== row.labels.join('\n')) changes.labels = input.labels;
  if (input.status !== undefined && input.status !== row.status) changes.status = input.status;
  return changes;
}

function emitEvents(ctx: OperationContext, row: TaskRow, changes: TaskChanges): void {
  const { status, ...fields } = changes;
  const fieldChanges: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(fields)) {
    const from = row[field as keyof TaskRow];
    fieldChanges[field] = field === 'priority' ? { from: priorityFromRank(from as number), to: priorityFromRank(to as number) } : { from, to };
  }
  if (Object.keys(fieldChanges).length > 0) ctx.emit({ type: 'task.updated', subject: row.id, data: { changes: fieldChanges } });
  if (status !== undefined) ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: row.status, to: status } });
}
