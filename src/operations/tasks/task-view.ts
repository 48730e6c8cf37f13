import { randomBytes } from 'node:crypto';
import { legacyFailureCode } from '../../domain/failure-codes.ts';
import { priorityFromRank } from '../../domain/task-priority.ts';
import { TASK_STATUSES, type TaskStatus, TRANSITIONS, transitionGuard, transitionVia } from '../../domain/task-status.ts';
import type { ActorKind } from '../../domain/scopes.ts';
import type { Principal } from '../../domain/principal.ts';
import type { CompactTaskRow, ListTaskRow, TaskRow } from '../../store/tasks.ts';
import { toArtifactRef } from '../artifacts/artifact-schema.ts';
import { mayCall } from '../authorization.ts';
import { project } from '../shared/lists.ts';
import { actsOnAnyTask, othersWork } from './task-access.ts';
import { COMPACT_FIELDS, LIST_COMPACT_FIELDS, type NextAction, type Task, TASK_CORE } from './task-schema.ts';

export type TaskShape = Partial<Task> & Pick<Task, (typeof TASK_CORE)[number]>;

/** Maps a row to the whole API object, with what THIS caller may do next. */
export function toTask(row: TaskRow, actor: Principal, times: Pick<Projection, 'now' | 'at'>): Task {
  const status = row.status as TaskStatus;
  return {
    id: row.id,
    title: row.title,
    description: row.description,
    status,
    priority: priorityFromRank(row.priority),
    labels: row.labels,
    version: row.version,
    lease: leaseSummary(row),
    blocked_by: row.blocked_by,
    waiting_on: row.waiting_on,
    ...waits(row),
    ...requiredReservations(row),
    artifacts: row.artifacts.map(toArtifactRef),
    legal_transitions: row.deleted_at ? [] : [...TRANSITIONS[status]],
    next_actions: row.deleted_at ? [] : nextActions(row, actor, times.at),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
    deleted_at: row.deleted_at?.toISOString() ?? null,
    ...archivedAt(row),
    assignee: row.assignee_id && row.assignee_kind ? { id: row.assignee_id, kind: row.assignee_kind } : null,
    handoff: row.handoff,
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    ...maxCost(row),
    not_before: row.not_before?.toISOString() ?? null,
    blocked_reason: row.blocked_reason,
    failures: row.failures.map((f) => ({ ...f, code: f.code ?? legacyFailureCode(f.kind) })),
    parent_id: row.parent_id,
    children: childCounts(row),
    due_at: row.due_at?.toISOString() ?? null,
    overdue: isOverdue(row, times.now),
  };
}

function childCounts(row: TaskRow): Task['children'] {
  const counts = Object.fromEntries(TASK_STATUSES.map((status) => [status, 0])) as Task['children'];
  for (const [status, n] of Object.entries(row.child_counts)) if (status in counts) counts[status as TaskStatus] = n;
  return counts;
}

/**
 * Past its due date and still open. Without the reader's clock (a write's answer), the maintenance
 * pass's mark says it: set when it wrote the task's `task.overdue` event.
 */
function isOverdue(row: Pick<TaskRow, 'due_at' | 'status' | 'overdue_at'>, now: Date | undefined): boolean {
  if (row.due_at === null || row.status === 'done' || row.status === 'cancelled') return false;
  return now ? row.due_at <= now : row.overdue_at !== null;
}

/**
 * `project(toTask(row, actor), COMPACT_FIELDS, TASK_CORE)` for a live task, without building the fields it
 * drops (a unit test holds the two equal, key order included), from only the columns it shows.
 */
export function toCompactTask(row: CompactTaskRow, actor: Principal, at: Date): TaskShape {
  return {
    ...compactHead(row),
    ...requiredReservations(row),
    artifacts: row.artifacts.map(toArtifactRef),
    legal_transitions: [...TRANSITIONS[row.status as TaskStatus]],
    next_actions: nextActions(row, actor, at),
    updated_at: row.updated_at.toISOString(),
    ...archivedAt(row),
  };
}

/**
 * `shapeTask(row, actor, { view: 'compact', now }, true)`, a list item's default view, without
 * building the fields it drops (a unit test holds the two equal, key order included), from only the
 * columns it shows: a list page reads no description, artifacts or subtask counts.
 */
export function toListTask(row: ListTaskRow, now: Date | undefined): TaskShape {
  const shaped: TaskShape = {
    ...compactHead(row),
    legal_transitions: row.deleted_at ? [] : [...TRANSITIONS[row.status as TaskStatus]],
    updated_at: row.updated_at.toISOString(),
  };
  if (row.deleted_at) shaped.deleted_at = row.deleted_at.toISOString();
  Object.assign(shaped, archivedAt(row));
  addWhereSet(shaped, {
    parent_id: row.parent_id,
    due_at: row.due_at?.toISOString() ?? null,
    overdue: isOverdue(row, now),
    attempts: row.attempts,
    max_attempts: row.max_attempts,
    not_before: row.not_before?.toISOString() ?? null,
    blocked_reason: row.blocked_reason,
    assignee: row.assignee_id && row.assignee_kind ? { id: row.assignee_id, kind: row.assignee_kind } : null,
  });
  return shaped;
}

/** The members a list item carries only where set: the tree, the schedule, failed attempts and the assignee (most tasks have none, and pages stay lean). */
type WhereSet = Pick<Task, 'parent_id' | 'due_at' | 'overdue' | 'attempts' | 'max_attempts' | 'not_before' | 'blocked_reason' | 'assignee'>;

function addWhereSet(shaped: TaskShape, task: WhereSet): void {
  if (task.parent_id !== null) shaped.parent_id = task.parent_id;
  if (task.due_at !== null) shaped.due_at = task.due_at;
  if (task.overdue) shaped.overdue = true;
  if (task.attempts > 0) {
    shaped.attempts = task.attempts;
    shaped.max_attempts = task.max_attempts;
  }
  if (task.not_before !== null) shaped.not_before = task.not_before;
  if (task.blocked_reason !== null) shaped.blocked_reason = task.blocked_reason;
  if (task.assignee !== null) shaped.assignee = task.assignee;
}

/** The fields both compact shapes open with, in `toTask`'s order. */
function compactHead(row: CompactTaskRow | ListTaskRow) {
  return {
    id: row.id,
    title: row.title,
    status: row.status as TaskStatus,
    priority: priorityFromRank(row.priority),
    labels: row.labels,
    version: row.version,
    lease: leaseSummary(row),
    waiting_on: row.waiting_on,
    ...waits(row),
  };
}

/** `archived_at` where set: most tasks are not archived. */
function archivedAt(row: Pick<TaskRow, 'archived_at'>): Pick<Partial<Task>, 'archived_at'> {
  return row.archived_at ? { archived_at: row.archived_at.toISOString() } : {};
}

/** `max_cost` and its currency where set: most tasks have none. */
function maxCost(row: Pick<TaskRow, 'max_cost_micros' | 'max_cost_currency'>): { max_cost?: number; max_cost_currency?: string } {
  return row.max_cost_micros === null ? {} : { max_cost: Number(row.max_cost_micros) / 1e6, max_cost_currency: row.max_cost_currency ?? 'USD' };
}

/** `open_asks`, `overdue_asks` and `review_overdue` where set: most tasks have none, and stay small. */
function waits(row: { open_asks: number; overdue_asks: number; review_overdue: boolean }): Pick<Partial<Task>, 'open_asks' | 'overdue_asks' | 'review_overdue'> {
  return {
    ...(row.open_asks > 0 ? { open_asks: row.open_asks } : {}),
    ...(row.overdue_asks > 0 && row.open_asks > 0 ? { overdue_asks: row.overdue_asks } : {}),
    ...(row.review_overdue ? { review_overdue: true } : {}),
  };
}

/** `reservations` where a task requires any (most do not), as given: a requirement's absent `mode` is exclusive. */
function requiredReservations(row: Pick<TaskRow, 'reservations'>): Pick<Task, 'reservations'> {
  if (!row.reservations?.length) return {};
  // In one member order (the database's JSON keeps its own).
  return { reservations: row.reservations.map(({ resource, repo, paths, mode }) => ({ ...(resource === undefined ? {} : { resource }), ...(repo === undefined ? {} : { repo }), ...(paths === undefined ? {} : { paths }), ...(mode === undefined ? {} : { mode }) })) };
}

function leaseSummary(row: CompactTaskRow | ListTaskRow): Task['lease'] {
  if (!row.lease_id || !row.lease_holder_id || !row.lease_holder_kind || !row.lease_expires_at) return null;
  return { id: row.lease_id, holder: { id: row.lease_holder_id, kind: row.lease_holder_kind }, epoch: row.lease_epoch, expires_at: row.lease_expires_at.toISOString() };
}

export interface Projection {
  view: 'compact' | 'full';
  fields?: readonly string[] | undefined;
  /** The reader's time, for `overdue`. */
  now?: Date | undefined;
  /** When the answer is made (the operation's clock), for `next_actions`: no claim while `not_before` is ahead. */
  at: Date;
}

/** Applies `fields` (which wins) or `view` to one task; `list` selects the leaner list default. */
export function shapeTask(row: TaskRow, actor: Principal, projection: Projection, list = false): TaskShape {
  // The default view of a live task, the shape of nearly every single-task answer, is built directly.
  if (!list && !projection.fields && projection.view === 'compact' && !row.deleted_at) return toCompactTask(row, actor, projection.at);
  const task = toTask(row, actor, projection);
  if (projection.fields) return project(task, projection.fields, TASK_CORE);
  if (projection.view === 'full') return task;
  // Compact views name a tombstone as such; a live task does not carry the null.
  const shaped = project(task, task.deleted_at ? (list ? LIST_COMPACT_TOMBSTONE : COMPACT_TOMBSTONE) : list ? LIST_COMPACT_FIELDS : COMPACT_FIELDS, TASK_CORE);
  if (list) addWhereSet(shaped, task);
  return shaped;
}

const COMPACT_TOMBSTONE = [...COMPACT_FIELDS, 'deleted_at'] as const;
const LIST_COMPACT_TOMBSTONE = [...LIST_COMPACT_FIELDS, 'deleted_at'] as const;

/**
 * The one status move `next_actions` offers from each status: the step forward in the work. Every
 * other legal move is in `legal_transitions`, made with `tasks_update` the same way; listing them
 * all would triple the size of every task an agent reads (spec/api.md, "next_actions").
 */
const FORWARD: Record<TaskStatus, TaskStatus | null> = {
  todo: 'in_progress',
  in_progress: 'in_review',
  in_review: 'done',
  blocked: 'todo',
  done: null,
  cancelled: null,
};

/**
 * The headers of a write offered in `next_actions`: a fresh Idempotency-Key made for that one action,
 * so an agent that sends the action as written gets a real key (and a retry of it is safe), never a
 * placeholder to copy. 96 random bits, base64url.
 */
export function writeHeaders(): Record<string, string> {
  return { 'Idempotency-Key': randomBytes(12).toString('base64url') };
}

/**
 * What this caller may do next, as ready-to-send requests: read the open asks it waits on; claim the task (when a claim by
 * this caller would go through at `at`: nothing it waits on, assigned to nobody else, no `not_before` ahead); keep the lease and hand
 * the work in with a summary; review work in review (approve, or request changes), unless the
 * caller handed it in; the other forward status moves; and, for an agent with nothing to do on this
 * task, claim more work. Explanations live in the docs, keyed by operation, to keep every task small.
 */
export function nextActions(row: CompactTaskRow, actor: Principal, at: Date): NextAction[] {
  const from = row.status as TaskStatus;
  const href = `/api/v1/tasks/${row.id}`;
  const holds = row.lease_holder_id === actor.id && row.lease_id !== null;
  const versioned = () => ({ ...writeHeaders(), 'If-Match': `"${row.version}"` });
  const actions: NextAction[] = [];
  // It waits on a human: the read lists the open asks, whose addressee answers (asks_answer) and whose asker waits (asks_get with wait_s).
  if (row.open_asks > 0 && mayCall(actor, 'asks_list', 'tasks:read')) {
    actions.push({ operation: 'asks_list', method: 'GET', href: `/api/v1/asks?task_id=${row.id}&status=open` });
  }
  const claimable = from === 'todo' && row.waiting_on.length === 0 && (row.assignee_id === null || row.assignee_id === actor.id) && !(row.not_before !== null && row.not_before > at);
  if (claimable && mayCall(actor, 'tasks_claim', 'tasks:claim')) {
    actions.push({ operation: 'tasks_claim', method: 'POST', href: `${href}/claim`, headers: writeHeaders() });
  }
  if (from === 'in_progress' && holds && mayCall(actor, 'leases_heartbeat', 'tasks:claim')) {
    actions.push({ operation: 'leases_heartbeat', method: 'POST', href: `/api/v1/leases/${row.lease_id}/heartbeat`, headers: writeHeaders() });
  }
  const handsIn = from === 'in_progress' && holds && mayCall(actor, 'tasks_hand_in', 'tasks:claim');
  if (handsIn) {
    // No If-Match: the lease epoch fences the hand-in, and a human's edit meanwhile (a label, the description) must not refuse it.
    actions.push({ operation: 'tasks_hand_in', method: 'POST', href: `${href}/hand_in`, headers: writeHeaders(), body: { lease_epoch: row.lease_epoch }, fill: ['summary'] });
  }
  // The principal that handed the work in is offered neither its review nor the move to done (separation of duties).
  const ownHandIn = from === 'in_review' && row.handoff?.by.id === actor.id;
  const reviews = from === 'in_review' && !ownHandIn && mayCall(actor, 'tasks_review', 'tasks:review');
  if (reviews) {
    actions.push({ operation: 'tasks_review', method: 'POST', href: `${href}/review`, headers: versioned(), body: { decision: 'approve' } });
    actions.push({ operation: 'tasks_review', method: 'POST', href: `${href}/review`, headers: versioned(), body: { decision: 'request_changes' }, fill: ['comment'] });
  }
  const to = FORWARD[from];
  // A task in progress is the holder's to move; a human may override.
  const mayMove = !(from === 'in_progress' && !holds && actor.kind !== 'human') && !handsIn && !reviews && !ownHandIn && mayChange(row, actor);
  if (to && mayMove && transitionVia(from, to) === 'tasks_update' && mayCall(actor, 'tasks_update', 'tasks:write') && passesGuard(from, to, actor)) {
    actions.push({ operation: 'tasks_update', method: 'PATCH', href, headers: versioned(), body: holds ? { status: to, lease_epoch: row.lease_epoch } : { status: to } });
  }
  if (!claimable && !holds && actor.kind === 'agent' && mayCall(actor, 'tasks_claim_next', 'tasks:claim')) {
    actions.push({ operation: 'tasks_claim_next', method: 'POST', href: '/api/v1/tasks/claim', headers: writeHeaders() });
  }
  return actions;
}

/** Outside a lease and a review, an agent changes only unassigned tasks, its own and those it created (update-task.ts checkOwnWork). */
function mayChange(row: CompactTaskRow, actor: Principal): boolean {
  return actsOnAnyTask(actor) || !othersWork(row, actor) || row.created_by_id === actor.id;
}

function passesGuard(from: TaskStatus, to: TaskStatus, actor: Principal): boolean {
  const guard = transitionGuard(from, to);
  if (guard === 'human') return actor.kind === 'human';
  if (guard === 'human_or_reviewer') return actor.kind === 'human' || actor.scopes.has('tasks:review');
  return true;
}
