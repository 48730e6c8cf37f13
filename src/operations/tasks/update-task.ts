import { closeAsksOfEndedTask } from '../asks/ask-flow.ts';
import { closeToReview, deliverToReview, noteChangeToAssignee } from '../inbox/task-inbox.ts';
import { z } from 'zod';
import { priorityFromRank, priorityRank } from '../../domain/task-priority.ts';
import {
  FINISHED_STATUSES,
  illegalTransitionHint,
  isLegalTransition,
  type TaskStatus,
  TRANSITIONS,
  transitionGuard,
  transitionVia,
} from '../../domain/task-status.ts';
import { BatonError } from '../../errors.ts';
import type { Principal } from '../../domain/principal.ts';
import { findPrincipals } from '../../store/agents.ts';
import { insertLease, latestLease } from '../../store/leases.ts';
import { type LeaseEnding, lockTask, NO_LEASE, type TaskChanges, type TaskRow, updateTask as updateTaskRow } from '../../store/tasks.ts';
import { defineOperation, type OperationContext } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { taskNotFound } from './get-task.ts';
import { shapeTask } from './task-view.ts';
import { blockedBy, parentParam, taskDescription, taskId, taskLabels, compactTaskOutput, taskPriority, taskStatus, taskTitle, timeParam } from './task-schema.ts';
import { checkParent, closeChildren } from './task-tree.ts';
import { checkBlockers } from './blockers.ts';
import { applyMaxCost, maxCostCurrencyParam, maxCostParam, requestedMaxCost } from '../budgets/task-max-cost.ts';
import { checkNotOwnHandIn } from './separation-of-duties.ts';
import { actsOnAnyTask, notYourTask, othersWork } from './task-access.ts';
import { lockTaskTree, lockTaskTreeForClose } from '../../store/task-tree.ts';
import { lockBlockerGraph } from '../../store/blockers.ts';
import type { Tx } from '../../store/connection.ts';
import { replaceTaskRequirements } from '../../store/reservations.ts';
import type { ReservationRequirement } from '../../store/schema.ts';
import { reservationRequirements } from '../reservations/task-reservations.ts';

const updateInput = z
  .strictObject({
    id: taskId,
    title: taskTitle.optional(),
    description: taskDescription.optional(),
    priority: taskPriority.optional(),
    labels: taskLabels.optional(),
    blocked_by: blockedBy.optional(),
    status: taskStatus.optional(),
    lease_epoch: z.int().min(1).optional().describe('Your lease\'s fencing epoch, on a task you hold: a stale one is refused with lease_expired.'),
    parent_id: parentParam.nullable().optional(),
    not_before: timeParam('not_before').nullable().optional(),
    due_at: timeParam('due_at').nullable().optional(),
    cancel_children: z.boolean().optional().describe('With status done.'),
    reservations: reservationRequirements.optional().describe('Replaces them; [] clears.'),
    max_cost: maxCostParam.nullable().optional(),
    max_cost_currency: maxCostCurrencyParam.optional(),
    archived: z.boolean().optional().describe('true: archive a done or cancelled task (out of lists).'),
  })
  .refine((input) => Object.keys(input).some((k) => k !== 'id' && k !== 'lease_epoch' && k !== 'cancel_children'), 'send at least one of title, description, priority, labels, blocked_by, status, parent_id, not_before, due_at, reservations, archived')
  .refine((input) => input.cancel_children === undefined || input.status === 'done', { message: 'cancel_children goes only with status done', path: ['cancel_children'] });
type UpdateInput = z.output<typeof updateInput>;

export const updateTask = defineOperation({
  name: 'tasks_update',
  summary: "Change a task's fields and/or status (one of its `legal_transitions`).",
  description: 'Claim and release have their own operations. A task in progress is its lease holder\'s to change (humans may override), with `lease_epoch`.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'work',
  http: { method: 'PATCH', path: '/tasks/{id}' },
  input: updateInput,
  output: compactTaskOutput,
  version: (task) => task.version ?? 0,
  async run(tx, ctx, input) {
    // A move in the tree, or a move to done of a task with subtasks (which locks them), takes the
    // tree lock before any task row: two such writes locking each other's rows in opposite orders would deadlock.
    if (input.parent_id) await lockTaskTree(tx);
    else if (input.status === 'done') await lockTaskTreeForClose(tx, input.id);
    // New blockers take the blocker-graph lock after the tree lock and before the task row, likewise.
    if (input.blocked_by?.length) await lockBlockerGraph(tx);
    const row = await lockTask(tx, input.id);
    if (!row) throw taskNotFound(input.id);
    assertVersion(`Task ${row.id}`, row.version, ctx.expectedVersion);
    checkLease(row, input.lease_epoch, ctx);
    if (input.status !== undefined && input.status !== row.status) checkTransition(row, input.status, ctx.actor);
    const changes = diff(row, input);
    archive(row, input.archived, changes, ctx.now);
    const maxCost = { micros: row.max_cost_micros === null ? null : Number(row.max_cost_micros), currency: row.max_cost_currency };
    const nextMaxCost = requestedMaxCost(maxCost, input);
    if (nextMaxCost.micros !== maxCost.micros || nextMaxCost.currency !== maxCost.currency) Object.assign(changes, { max_cost_micros: nextMaxCost.micros, max_cost_currency: nextMaxCost.currency });
    const required = requirementsChange(row, input.reservations);
    checkOwnWork(row, required ? { ...changes, reservations: required } : changes, ctx.actor);
    if (row.status === 'in_review' && input.status === 'done') await checkNotOwnHandIn(tx, ctx, row);
    if (input.blocked_by) await checkBlockers(tx, row, input.blocked_by);
    if (input.parent_id && input.parent_id !== row.parent_id) await checkParent(tx, row.id, input.parent_id);

    // Nothing differs: no write, no event, no new version.
    if (Object.keys(changes).length === 0 && !required) return shapeTask(row, ctx.actor, { view: 'compact', at: ctx.now });

    if ('max_cost_micros' in changes) await applyMaxCost(tx, ctx, row.id, maxCost, nextMaxCost);
    if (changes.status === 'done') await closeChildren(tx, ctx, row, input.cancel_children ?? false);
    if (changes.status === 'done' || changes.status === 'cancelled') await closeAsksOfEndedTask(tx, ctx, row, `task_${changes.status}`);
    const lease = changes.status === undefined ? { changes: {} } : await moveLease(tx, ctx, row, changes.status as TaskStatus);
    // Before the row's update, whose answer reads them back.
    if (required) await replaceTaskRequirements(tx, row.id, required);
    const updated = await updateTaskRow(
      tx,
      row.id,
      // A status change by hand takes a dead-lettered task out of the dead-letter view.
      { ...changes, ...lease.changes, ...(changes.status !== undefined && row.blocked_reason ? { blocked_reason: null } : {}), updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind },
      lease.ending,
    );
    emitEvents(ctx, row, changes, required);
    // Archiving is housekeeping on finished work: the assignee is not told of it.
    const noted = [...Object.keys(changes).filter((field) => field !== 'archived_at'), ...(required ? ['reservations'] : [])];
    if (noted.length > 0) await noteChangeToAssignee(tx, ctx, row, { fields: noted, ...(changes.status === undefined ? {} : { status: changes.status }) });
    if (row.status === 'in_review' && changes.status !== undefined) await closeToReview(tx, ctx, row.id);
    if (changes.status === 'in_review') await deliverToReview(tx, ctx, [{ id: row.id, summary: row.title }]);
    return shapeTask(updated, ctx.actor, { view: 'compact', at: ctx.now });
  },
});

/** A task in progress is its holder's: agents other than the holder are refused; a stale epoch or lapsed lease is 409. */
export function checkLease(row: TaskRow, epoch: number | undefined, ctx: OperationContext): void {
  if (epoch !== undefined && (row.status !== 'in_progress' || epoch !== row.lease_epoch)) {
    throw new BatonError('lease_expired', `lease_epoch ${epoch} is stale: task ${row.id} is ${row.status} at lease epoch ${row.lease_epoch}.`, {
      extra: { task_id: row.id, current_epoch: row.lease_epoch },
    });
  }
  if (row.status !== 'in_progress' || ctx.actor.kind === 'human') return;
  if (row.lease_holder_id !== ctx.actor.id) {
    throw new BatonError('not_lease_holder', `Task ${row.id} is in progress under ${row.lease_holder_kind ?? 'no'} holder ${row.lease_holder_id ?? ''}, not you.`, {
      extra: { holder: { id: row.lease_holder_id, kind: row.lease_holder_kind } },
    });
  }
  if (row.lease_expires_at && row.lease_expires_at <= ctx.now) {
    throw new BatonError('lease_expired', `Your lease on task ${row.id} expired at ${row.lease_expires_at.toISOString()}.`, {
      extra: { task_id: row.id, expired_at: row.lease_expires_at.toISOString() },
    });
  }
}

/**
 * An agent without `agents:admin` changes only tasks that are unassigned (and not another's work in review), its own, or created by it
 * (an orchestrator edits what it handed out); a task in progress is its lease holder's (checkLease).
 * A reviewer's decision on work in review (to done or back to in_progress, guarded by tasks:review)
 * is allowed on anyone's task, as through tasks_review; cancelling or editing it is not.
 * spec/collaboration.md, "Assignment".
 */
function checkOwnWork(row: TaskRow, changes: TaskChanges & { reservations?: unknown }, actor: Principal): void {
  if (row.status === 'in_progress' || actsOnAnyTask(actor) || !othersWork(row, actor) || row.created_by_id === actor.id) return;
  const reviews = row.status === 'in_review' && (changes.status === 'done' || changes.status === 'in_progress') && Object.keys(changes).length === 1;
  if (reviews) return;
  throw notYourTask(row, 'an agent may change only an unassigned task, its own, or one it created (a reviewer may also approve it or request changes)');
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
  if (via !== 'tasks_update') {
    throw new BatonError('invalid_transition', `Task ${row.id} moves from ${from} to ${to} only through ${via}, not a status update.`, {
      hint:
        via === 'tasks_claim'
          ? `Claim it: [[tasks_claim id=${row.id}]].`
          : `Release the lease: [[leases_release id=${row.lease_id ?? '{lease_id}'}]].`,
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

/**
 * Leaving in_progress ends the lease (in the task's own update); returning from in_review hands
 * the work back to its last holder under a fresh lease (higher epoch), so it can never sit in
 * progress unleased.
 */
export async function moveLease(
  tx: Tx,
  ctx: OperationContext,
  row: TaskRow,
  to: TaskStatus,
  holder?: { id: string; kind: 'human' | 'agent' },
): Promise<{ changes: TaskChanges; ending?: LeaseEnding }> {
  if (row.status === 'in_progress' && row.lease_id) {
    ctx.emit({ type: 'lease.released', subject: row.id, data: { lease_id: row.lease_id, reason: 'status_changed', to } });
    // A cancel is the run's failure (spec/runs.md "Failure codes"); any other move ends it without one.
    return { changes: NO_LEASE, ending: { id: row.lease_id, state: 'ended', failure_code: to === 'cancelled' ? 'cancelled' : undefined } };
  }
  if (to !== 'in_progress') return { changes: {} };
  const last = await latestLease(tx, row.id);
  // A named holder (the assignee) gets the work back; else its last holder, on the machine it used.
  const previous = holder && holder.id !== last?.holder_id ? { holder_id: holder.id, holder_kind: holder.kind, token_id: null, machine: null } : last;
  if (!previous) {
    throw new BatonError('invalid_transition', `Task ${row.id} has never been claimed, so there is no holder to hand it back to.`, {
      hint: 'Move it to cancelled, or reopen it as todo and let an agent claim it.',
      extra: { legal_transitions: [...TRANSITIONS[row.status as TaskStatus]], current_status: row.status },
    });
  }
  await checkEnabled(tx, row, previous);
  const ttlS = ctx.config.leaseTtl.defaultS;
  const expiresAt = new Date(ctx.now.getTime() + ttlS * 1000);
  const epoch = row.lease_epoch + 1;
  const lease = await insertLease(tx, {
    id: ctx.ids.make('lea'),
    task_id: row.id,
    holder_id: previous.holder_id,
    holder_kind: previous.holder_kind,
    token_id: previous.token_id,
    machine: previous.machine,
    epoch,
    ttl_s: ttlS,
    state: 'active',
    acquired_at: ctx.now,
    renewed_at: ctx.now,
    expires_at: expiresAt,
    created_at: ctx.now,
    created_by_id: ctx.actor.id,
    created_by_kind: ctx.actor.kind,
  });
  ctx.emit({ type: 'task.claimed', subject: row.id, data: { lease_id: lease.id, epoch, ttl_s: ttlS, expires_at: expiresAt.toISOString(), holder_id: previous.holder_id, reason: 'changes_requested' } });
  return { changes: { lease_id: lease.id, lease_holder_id: previous.holder_id, lease_holder_kind: previous.holder_kind, lease_expires_at: expiresAt, lease_epoch: epoch } };
}

/**
 * Work goes back only to a principal who can do it: handing a disabled one a lease (and, on a
 * review, the assignment) would leave the task waiting for it forever. The caller reassigns first.
 */
async function checkEnabled(tx: Tx, row: TaskRow, to: { holder_id: string; holder_kind: 'human' | 'agent' }): Promise<void> {
  const [principal] = await findPrincipals(tx, { ids: [to.holder_id], names: [] });
  if (!principal?.disabled) return;
  throw new BatonError('principal_disabled', `Task ${row.id} would go back to ${to.holder_kind} ${to.holder_id} (${principal.name}), who is disabled.`, {
    hint: 'Assign the task to another principal (tasks_assign) and request changes with tasks_review: the work goes to the assignee. Or cancel the task.',
    extra: { principal: { id: to.holder_id, kind: to.holder_kind } },
  });
}

function diff(row: TaskRow, input: UpdateInput): TaskChanges {
  const changes: TaskChanges = {};
  if (input.title !== undefined && input.title !== row.title) changes.title = input.title;
  if (input.description !== undefined && input.description !== row.description) changes.description = input.description;
  if (input.priority !== undefined && priorityRank(input.priority) !== row.priority) changes.priority = priorityRank(input.priority);
  if (input.labels !== undefined && input.labels.join('\n') !== row.labels.join('\n')) changes.labels = input.labels;
  if (input.blocked_by !== undefined && input.blocked_by.join('\n') !== row.blocked_by.join('\n')) changes.blocked_by = input.blocked_by;
  if (input.status !== undefined && input.status !== row.status) changes.status = input.status;
  if (input.parent_id !== undefined && input.parent_id !== row.parent_id) changes.parent_id = input.parent_id;
  if (input.not_before !== undefined && input.not_before?.getTime() !== row.not_before?.getTime()) changes.not_before = input.not_before;
  // A new due date gets its own overdue event.
  if (input.due_at !== undefined && input.due_at?.getTime() !== row.due_at?.getTime()) Object.assign(changes, { due_at: input.due_at, overdue_at: null });
  return changes;
}

/** The statuses a task may be archived in: finished work. */
const FINISHED: ReadonlySet<string> = new Set<TaskStatus>(FINISHED_STATUSES);

/**
 * Adds the change of `archived_at` to `changes`: `archived: true` archives a task that is done or
 * cancelled once this write is applied (else 409 task_not_finished), `false` unarchives; a task
 * reopened without `archived: true` is unarchived with it, so an archived task is always finished.
 */
function archive(row: TaskRow, archived: boolean | undefined, changes: TaskChanges, now: Date): void {
  const status = changes.status ?? row.status;
  if (archived === true && !FINISHED.has(status)) {
    throw new BatonError('task_not_finished', `Task ${row.id} is ${status}; only a done or cancelled task can be archived.`, {
      extra: { current_status: row.status },
    });
  }
  const keep = archived ?? (row.archived_at !== null && FINISHED.has(status));
  if (keep && row.archived_at === null) changes.archived_at = now;
  else if (!keep && row.archived_at !== null) changes.archived_at = null;
}

/**
 * The reservations the task will require, when `given` differs from what it requires now (a
 * requirement's absent mode is exclusive; order counts, as it is shown); undefined when unchanged.
 */
function requirementsChange(row: TaskRow, given: readonly ReservationRequirement[] | undefined): ReservationRequirement[] | undefined {
  if (given === undefined) return undefined;
  const canonical = (list: readonly ReservationRequirement[]) => JSON.stringify(list.map((r) => [r.resource ?? null, r.repo ?? null, r.paths ?? null, r.mode ?? 'exclusive']));
  return canonical(given) === canonical(row.reservations ?? []) ? undefined : [...given];
}

function emitEvents(ctx: OperationContext, row: TaskRow, changes: TaskChanges, required: ReservationRequirement[] | undefined): void {
  const { status, ...fields } = changes;
  const fieldChanges: Record<string, { from: unknown; to: unknown }> = {};
  for (const [field, to] of Object.entries(fields)) {
    if (field === 'overdue_at') continue;
    if (field === 'max_cost_micros') {
      // In the currency's units, as the task shows it.
      fieldChanges.max_cost = { from: row.max_cost_micros === null ? null : Number(row.max_cost_micros) / 1e6, to: to === null ? null : Number(to) / 1e6 };
      continue;
    }
    if (field === 'max_cost_currency' && to === row.max_cost_currency) continue;
    const from = row[field as keyof TaskRow];
    fieldChanges[field] = field === 'priority' ? { from: priorityFromRank(from as number), to: priorityFromRank(to as number) } : { from, to };
  }
  if (required) fieldChanges.reservations = { from: row.reservations ?? [], to: required };
  if (Object.keys(fieldChanges).length > 0) ctx.emit({ type: 'task.updated', subject: row.id, data: { changes: fieldChanges } });
  if (status !== undefined) ctx.emit({ type: 'task.status_changed', subject: row.id, data: { from: row.status, to: status } });
}
