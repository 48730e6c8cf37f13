import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Principal } from '../domain/principal.ts';
import { plan } from '../domain/schedule-plan.ts';
import { BatonError, OPERATION_NAMES } from '../errors.ts';
import { createTask } from '../operations/tasks/create-task.ts';
import { instantiateTemplate } from '../operations/templates/instantiate-template.ts';
import type { Service } from '../service/service.ts';
import { findAgent } from '../store/agents.ts';
import { appendEvents } from '../store/events.ts';
import { advanceSchedule, dueSchedules, type ScheduleRow, taskOpen, workspacesWithSchedulesDue } from '../store/schedules.ts';
import type { DB } from '../store/schema.ts';
import type { Tx } from '../store/connection.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import type { Ids } from '../ids.ts';
import { type Scope, SYSTEM_ACTOR } from '../domain/scopes.ts';
import { operationKey } from '../operations/authorization.ts';

const BATCH = 50;

export interface ScheduleDeps {
  readonly clock: Clock;
  readonly ids: Ids;
  readonly service: Pick<Service, 'execute'>;
}

/**
 * One pass over the schedules with an occurrence due (in the workspaces that have one): each due occurrence the plan keeps (on time,
 * or caught up after downtime) creates its task through `tasks_create` (or its template's graph
 * through `templates_instantiate`), as the schedule's creator
 * from the token it was created with (machine `schedule:<id>`), under the idempotency key
 * `schedule-<id>-<occurrence ms>`; then the schedule moves past them with a compare-and-set. Two
 * instances handling one schedule at once create each occurrence's task once (the second gets the
 * stored answer, or backs off while the first still runs), and only one of them moves the
 * schedule; a pass cut short between the two steps is finished by the next, which replays the keys.
 */
export async function runSchedules(db: Kysely<DB>, deps: ScheduleDeps): Promise<{ created: number; skipped: number }> {
  const now = deps.clock.now();
  let created = 0;
  let skipped = 0;
  for (const workspace of await workspacesWithSchedulesDue(db, now)) {
    const scoped: Scoped = (work) => inWorkspace(db, workspace, work);
    for (const schedule of await scoped((tx) => dueSchedules(tx, now, BATCH))) {
      const done = await runSchedule(scoped, workspace, deps, schedule, now).catch((error: unknown) => {
      // Another instance is creating this occurrence right now: it finishes the schedule.
        if (error instanceof BatonError && error.code === 'idempotency_in_progress') return { created: 0, skipped: 0 };
        throw error;
      });
      created += done.created;
      skipped += done.skipped;
    }
  }
  return { created, skipped };
}

/** Runs its work in a short transaction bound to the workspace being visited. */
type Scoped = <T>(work: (tx: Tx) => Promise<T>) => Promise<T>;

async function runSchedule(scoped: Scoped, workspace: string, deps: ScheduleDeps, schedule: ScheduleRow, now: Date): Promise<{ created: number; skipped: number }> {
  const due = schedule.next_run_at && schedule.next_run_at <= now ? plan(schedule, schedule.next_run_at, now) : { create: [], missed: 0, next: schedule.next_run_at };
  // A held occurrence (coalesce) goes first, once the last task has closed.
  const occurrences = schedule.held_at ? [schedule.held_at, ...due.create] : [...due.create];
  const owner = await scoped((tx) => ownerOf(tx, workspace, schedule));
  let lastTaskId = schedule.last_task_id;
  let lastRunAt = schedule.last_run_at;
  let held: Date | null = null;
  const skippedAt: Date[] = [];
  const refused: { at: Date; code: string; detail: string }[] = [];
  for (const at of occurrences) {
    const taskId = lastTaskId;
    const open = taskId !== null && (await scoped((tx) => taskOpen(tx, taskId)));
    if (open && schedule.overlap === 'skip') {
      skippedAt.push(at);
      continue;
    }
    if (open && schedule.overlap === 'coalesce') {
      // One occurrence waits for the open task; later ones fold into it.
      held = held ?? at;
      continue;
    }
    if (!owner) {
      skippedAt.push(at);
      continue;
    }
    const made = await makeOccurrence(deps, schedule, owner, at);
    if ('refused' in made) {
      refused.push({ at, ...made.refused });
      continue;
    }
    lastTaskId = made.id;
    lastRunAt = at;
  }
  const won = await scoped((tx) => advanceSchedule(tx, schedule, { next_run_at: due.next, held_at: held, last_run_at: lastRunAt, last_task_id: lastTaskId }));
  if (!won) return { created: 0, skipped: 0 };
  if (skippedAt.length > 0 || due.missed > 0) await recordSkipped(scoped, deps, schedule, { skipped: skippedAt, missed: due.missed, owner: owner !== undefined }, now);
  for (const refusal of refused) await recordRefused(scoped, deps, schedule, refusal, now);
  return { created: occurrences.length - skippedAt.length - refused.length - (held ? 1 : 0), skipped: skippedAt.length + due.missed + refused.length };
}

/**
 * Makes one occurrence's task, or its template's graph (whose first task made, a top-level one, is
 * the one `overlap` watches), under the occurrence's idempotency key. A refusal that retrying cannot
 * change (the template was deleted, its parameters no longer fit, an assignee was disabled) is
 * answered, not thrown, so the schedule moves past it; a retryable one is thrown for the next pass.
 */
async function makeOccurrence(deps: ScheduleDeps, schedule: ScheduleRow, owner: Principal, at: Date): Promise<{ id: string } | { refused: { code: string; detail: string } }> {
  const call = { principal: owner, idempotencyKey: `schedule-${schedule.id}-${at.getTime()}`, expectedVersion: undefined, dialect: OPERATION_NAMES };
  try {
    const outcome = schedule.template
      ? await deps.service.execute(instantiateTemplate, { id: schedule.template.id, ...(schedule.template.params ? { params: schedule.template.params } : {}) }, call)
      : await deps.service.execute(createTask, schedule.task, call);
    // A replay of a refusal stored by an earlier pass.
    if (!outcome.ok) {
      const problem = JSON.parse(outcome.body) as { code: string; detail: string };
      return { refused: { code: problem.code, detail: problem.detail } };
    }
    const body = JSON.parse(outcome.body) as { id?: string; tasks?: { id: string }[] };
    return { id: body.id ?? body.tasks?.[0]?.id ?? '' };
  } catch (error) {
    if (error instanceof BatonError && !error.retryable) return { refused: { code: error.code, detail: error.detail } };
    throw error;
  }
}

/**
 * The schedule's creator as the principal its tasks are created by, with the scopes and allowlist
 * they hold now (one who may no longer create tasks has each occurrence refused, not made with a
 * scope they lost); undefined once disabled or gone.
 */
async function ownerOf(db: Kysely<DB>, workspace: string, schedule: ScheduleRow): Promise<Principal | undefined> {
  const found = await findAgent(db, schedule.created_by_id);
  if (!found || found.disabled) return undefined;
  const toolAllowlist = found.tool_allowlist ? new Set(found.tool_allowlist.map(operationKey)) : null;
  return { id: found.id, kind: found.kind, name: found.name, workspaceId: workspace, scopes: new Set(found.scopes as Scope[]), toolAllowlist, tokenId: schedule.owner_token_id, machine: `schedule:${schedule.id}` };
}

/** `schedule.skipped {reason: "refused"}` by the system: an occurrence whose task or graph was refused, with the problem's code and detail. */
function recordRefused(scoped: Scoped, deps: ScheduleDeps, schedule: ScheduleRow, refusal: { at: Date; code: string; detail: string }, now: Date): Promise<void> {
  return appendSkipped(scoped, deps, schedule, { occurrences: [refusal.at.toISOString()], missed: 0, reason: 'refused', code: refusal.code, detail: refusal.detail }, now);
}

/** `schedule.skipped` by the system: which occurrences made no task, and why. */
function recordSkipped(scoped: Scoped, deps: ScheduleDeps, schedule: ScheduleRow, what: { skipped: Date[]; missed: number; owner: boolean }, now: Date): Promise<void> {
  const reason = !what.owner ? 'owner_disabled' : what.skipped.length > 0 ? 'last_task_open' : 'missed';
  return appendSkipped(scoped, deps, schedule, { occurrences: what.skipped.map((at) => at.toISOString()), missed: what.missed, reason }, now);
}

/** One `schedule.skipped` event by the system actor, with the schedule's last task beside `data`. */
async function appendSkipped(scoped: Scoped, deps: ScheduleDeps, schedule: ScheduleRow, data: Record<string, unknown>, now: Date): Promise<void> {
  await scoped((tx) =>
    appendEvents(tx, [
      {
        id: deps.ids.make('evt'),
        type: 'schedule.skipped',
        subject: schedule.id,
        actor_id: SYSTEM_ACTOR.id,
        actor_kind: SYSTEM_ACTOR.kind,
        token_id: null,
        machine: null,
        idempotency_key: null,
        data: { ...data, last_task_id: schedule.last_task_id },
        created_at: now,
      },
    ]),
  );
}
