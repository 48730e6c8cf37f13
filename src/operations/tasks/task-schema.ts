import { z } from 'zod';
import { ACTOR_KINDS, PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { TASK_PRIORITIES } from '../../domain/task-priority.ts';
import { TASK_STATUSES } from '../../domain/task-status.ts';
import { idPattern } from '../../ids.ts';
import { artifactRef } from '../artifacts/artifact-schema.ts';
import { discussionOutput } from '../comments/discussion.ts';
import { failureCode } from '../shared/failure-code.ts';

export const TITLE_MAX = 200;
export const DESCRIPTION_MAX = 4000;
export const LABELS_MAX = 20;
export const BLOCKERS_MAX = 20;
/** Artifacts one task holds: every task read lists their references, so the list is bounded. */
export const TASK_ARTIFACTS_MAX = 100;
export const HANDOFF_ARTIFACTS_MAX = 20;

export const taskId = z.string().regex(new RegExp(idPattern('tsk')), 'must be a task id: tsk_ followed by a 26-character ULID');
export const taskStatus = z.enum(TASK_STATUSES);
/** A count of tasks per status (the OpenAPI document's `StatusCounts`). */
export const statusCounts = z.object(Object.fromEntries(TASK_STATUSES.map((status) => [status, z.int()])) as Record<(typeof TASK_STATUSES)[number], z.ZodInt>);
export const taskPriority = z.enum(TASK_PRIORITIES);
export const taskTitle = z.string().trim().min(1, 'title must not be empty').max(TITLE_MAX, `title is limited to ${TITLE_MAX} characters`);
export const taskDescription = z
  .string()
  .max(DESCRIPTION_MAX, `description is limited to ${DESCRIPTION_MAX} characters inline; put longer text in an artifact (artifacts_create, POST /api/v1/artifacts, with this task's task_id) and keep a summary here`);
export const taskLabels = z
  .array(z.string().max(50, 'labels are at most 50 characters').regex(/^[a-z0-9][a-z0-9_.:/-]{0,49}$/, 'labels are 1–50 lowercase letters, digits and _ . : / -'))
  .max(LABELS_MAX, `at most ${LABELS_MAX} labels`)
  .refine((labels) => new Set(labels).size === labels.length, 'labels must not repeat');

export const maxAttemptsParam = z.int().min(1).max(100).describe("Attempts this task gets before it leaves the queue (1–100); default: the server's BATON_MAX_ATTEMPTS.");

export const assigneeParam = z
  .string()
  .regex(new RegExp(idPattern('agt')), 'must be a principal id: agt_ followed by a 26-character ULID')
  .describe('The agent or human the task is for, by id (`agt_…`): only they can claim it.');

/** Trees of subtasks are at most this many levels deep (a top-level task is level 1). */
export const TREE_DEPTH_MAX = 8;
/** Live subtasks one task may have: a close locks them all, and `children` counts them on every read. */
export const SUBTASKS_MAX = 200;
/**
 * The longest chain of blockers (A waits on B, which waits on C…), counted in tasks: every new
 * edge walks the chains through it, so the walk is bounded, and deeper plans are flattened.
 */
export const BLOCKER_CHAIN_MAX = 32;

/** A time a caller sets: RFC 3339 with a zone, years 2000–2999. */
const TIME = /^2\d{3}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d{1,9})?)?(Z|[+-]\d\d:\d\d)$/;

/**
 * A time a caller sets (`not_before`, `due_at`), checked by a refinement rather than a JSON Schema
 * pattern: the MCP tool listing has a size budget, and z.iso.datetime()'s pattern is 400 characters.
 */
export function timeParam(name: string) {
  return timeText(name).transform((value) => new Date(value));
}

/** `timeParam` kept as the text given (an input whose stored fingerprint has always held the text). */
export function timeText(name: string) {
  const message = `${name} must be an RFC 3339 time with a zone between the years 2000 and 2999, e.g. 2026-12-01T09:00:00Z`;
  return z
    .string()
    .max(40)
    .meta({ format: 'date-time' })
    .refine((value) => TIME.test(value) && !Number.isNaN(Date.parse(value)), message);
}

/** A task id, checked by a refinement (no pattern in the tool listing: see timeParam). */
export function taskRef(name: string, also?: string) {
  const pattern = new RegExp(idPattern('tsk'));
  return z.string().max(30).refine((value) => pattern.test(value) || value === also, `${name} must be ${also ? `${also} or ` : ''}a task id: tsk_ followed by a 26-character ULID`);
}

export const parentParam = taskRef('parent_id');

export const actorRef = z.object({ id: z.string(), kind: z.enum(ACTOR_KINDS) });
export const holderRef = z.object({ id: z.string(), kind: z.enum(PRINCIPAL_KINDS) });

export const taskLeaseSummary = z
  .object({
    id: z.string(),
    holder: holderRef,
    epoch: z.int().describe('Fencing epoch: send it as `lease_epoch` on your writes; a stale one is refused.'),
    expires_at: z.iso.datetime(),
  })
  .describe('The current lease while the task is in progress; null otherwise.');
export const blockedBy = z.array(taskId).max(BLOCKERS_MAX, `at most ${BLOCKERS_MAX} blockers`).refine((ids) => new Set(ids).size === ids.length, 'blockers must not repeat');

export const HANDOFF_SUMMARY_MAX = 2000;
export const handoff = z.object({
  summary: z.string().describe(`What was done, in up to ${HANDOFF_SUMMARY_MAX} characters of Markdown.`),
  artifacts: z.array(z.string()).max(HANDOFF_ARTIFACTS_MAX).describe('Ids of the artifacts handed in with it (a diff, a report); GET /api/v1/artifacts/{id}.'),
  by: holderRef,
  at: z.iso.datetime(),
});

/**
 * A request the caller may send next, ready to use: no prior knowledge of the API needed, only the
 * words of the members `fill` names. Over MCP it is the call of the tool named `operation`, with `id`
 * from `href`, `body` as the other arguments, the Idempotency-Key as `idempotency_key` and If-Match's
 * number as `expected_version`.
 */
export const nextAction = z.object({
  operation: z.string().describe('The operation, also the MCP tool name; spec/agent-guide.md explains each.'),
  method: z.enum(['GET', 'POST', 'PATCH', 'DELETE']),
  href: z.string(),
  headers: z.record(z.string(), z.string()).optional().describe('Headers to send as given: the Idempotency-Key is a fresh one made for this one action (resend it only to retry the action).'),
  body: z.record(z.string(), z.unknown()).optional().describe('The JSON body; absent: send none (or `{}`).'),
  fill: z
    .array(z.string())
    .max(2)
    .optional()
    .describe('Body members only you can write, to add before sending: a hand-in\'s `summary`, a change request\'s `comment`. Absent: send the action as it is.'),
});
export type NextAction = z.infer<typeof nextAction>;

/** A reservation a task requires, as shown on the task (tasks_create and tasks_update take `reservations`). */
export const taskRequirement = z.object({ resource: z.string().optional(), repo: z.string().optional(), paths: z.array(z.string()).max(50).optional(), mode: z.enum(['exclusive', 'shared']).optional() });

/** The whole task, the `full` view: every member present (`discussion` only on tasks_get). */
export const fullTask = z.object({
  id: taskId,
  title: z.string(),
  description: z.string(),
  status: taskStatus,
  priority: taskPriority,
  labels: z.array(z.string()).max(LABELS_MAX),
  version: z.int().describe('Increments on every change; served as the ETag.'),
  lease: taskLeaseSummary.nullable(),
  blocked_by: z.array(z.string()).max(BLOCKERS_MAX).describe('Tasks that must be done before this one can be claimed.'),
  waiting_on: z.array(z.string()).max(BLOCKERS_MAX).describe('The blockers not done yet; claimable when empty.'),
  open_asks: z.int().optional().describe('Asks on it waiting for an answer (asks_list); absent when none.'),
  overdue_asks: z.int().optional().describe('Of those, past their SLA; absent when none.'),
  review_overdue: z.literal(true).optional().describe('In review past its SLA; absent otherwise.'),
  reservations: z
    .array(taskRequirement)
    .max(10)
    .optional()
    .describe('Reservations a claim takes with the lease (mode absent: exclusive); absent when none.'),
  artifacts: z.array(artifactRef).max(TASK_ARTIFACTS_MAX).describe(`Long bodies attached to the task, as references (never inlined), oldest first; at most ${TASK_ARTIFACTS_MAX}.`),
  legal_transitions: z.array(taskStatus).max(TASK_STATUSES.length).describe('Statuses reachable from this one by the state machine.'),
  next_actions: z.array(nextAction).max(4).describe('What this caller may do next, as ready-to-send requests.'),
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
  created_by: actorRef,
  updated_by: actorRef,
  deleted_at: z.iso.datetime().nullable().describe('Set on a deleted task (seen only in `since` deltas and delete responses).'),
  archived_at: z.iso.datetime().optional().describe('Set while archived.'),
  assignee: holderRef.nullable().describe('Who the task is for: only they can claim it. null: anyone whose filters match.'),
  handoff: handoff.nullable().describe('The last hand-in for review: what the agent says it did, for the reviewer.'),
  attempts: z.int().describe('Failed attempts so far: leases ended without a hand-in (expired, or released as failed).'),
  max_attempts: z.int().nullable().describe("The task's own attempt limit; null: the server's default (BATON_MAX_ATTEMPTS)."),
  max_cost: z.number().optional().describe("A cap on what its runs spend, in max_cost_currency (a task budget); absent when none."),
  max_cost_currency: z.string().optional(),
  not_before: z.iso.datetime().nullable().describe('Not claimable before this time: scheduled for later, or backing off after a failed attempt.'),
  blocked_reason: z.enum(['attempts_exhausted']).nullable().describe('Set when the server took the task out of the queue: it is in the dead-letter.'),
  failures: z
    .array(z.object({ at: z.iso.datetime(), kind: z.enum(['expired', 'failed']), code: failureCode, reason: z.string().nullable(), lease_id: z.string(), holder_id: z.string() }))
    .max(5)
    .describe('The last failed attempts (at most 5), oldest first.'),
  parent_id: z.string().nullable().describe('The parent task; null: top-level.'),
  children: statusCounts.describe('How many live subtasks this task has, by status; list them with GET /api/v1/tasks?parent={id}.'),
  due_at: z.iso.datetime().nullable().describe('When the task is due; null: no due date.'),
  overdue: z.boolean().describe('Past due_at and not done or cancelled.'),
  discussion: discussionOutput.optional().describe('On tasks_get with view=full (or fields=discussion): the change request and latest human comments, as a claim answer carries them.'),
});
export type Task = z.infer<typeof fullTask>;

export const TASK_FIELDS = Object.keys(fullTask.shape) as [keyof Task, ...(keyof Task)[]];
/** One task, compact (default). */
export const COMPACT_FIELDS: readonly (keyof Task)[] = ['id', 'title', 'status', 'priority', 'labels', 'version', 'lease', 'waiting_on', 'open_asks', 'overdue_asks', 'review_overdue', 'reservations', 'artifacts', 'updated_at', 'legal_transitions', 'next_actions', 'archived_at'];
/** A claimed task, in a claim's answer: the compact fields plus the work itself, its `description`. */
export const CLAIM_FIELDS: readonly (keyof Task)[] = ['id', 'title', 'description', ...COMPACT_FIELDS.slice(2)];
/** A list item, compact (default): next_actions only on request, to keep pages lean. */
export const LIST_COMPACT_FIELDS: readonly (keyof Task)[] = ['id', 'title', 'status', 'priority', 'labels', 'version', 'lease', 'waiting_on', 'open_asks', 'overdue_asks', 'review_overdue', 'updated_at', 'legal_transitions', 'archived_at'];

/** The fields every task carries, whatever the view or `fields` (so the OpenAPI document marks them required). */
const CORE = { id: true, title: true, status: true, version: true } as const;
export const TASK_CORE = Object.keys(CORE) as (keyof typeof CORE)[];
/** A task as served: the core always; the other fields as the view or `fields` selected. */
export const taskOutput = fullTask.partial().required(CORE).strict();

/** A schema of the task members `fields` names, each required: what a fixed view always carries. */
export function taskView(fields: readonly (keyof Task)[]) {
  const mask: Partial<Record<keyof Task, true>> = Object.fromEntries(fields.map((field) => [field, true]));
  return fullTask.pick(mask).strict();
}

/** The compact view of a live task: every COMPACT_FIELDS member present. */
export const compactTaskView = taskView(COMPACT_FIELDS);
/** The task in a claim's answer: every CLAIM_FIELDS member present. */
export const claimedTaskView = taskView(CLAIM_FIELDS);

/**
 * A write's answer in a fixed view (compact, full): the same schema as `taskOutput` (so GraphQL and
 * MCP derive one task type), distinct objects so the OpenAPI document can name each answer's exact
 * view, its members required (src/adapters/rest/openapi-components.ts).
 */
export const compactTaskOutput = taskOutput.clone();
export const fullTaskOutput = taskOutput.clone();
