/**
 * Which events concern a principal: what an agent's filtered stream (`events_stream?for=me`)
 * carries, and how the event tail routes an event to the streams it concerns without waking the others.
 * Pure; the SQL of `eventsFor` (src/store/inbox-events.ts) is held to `addressedTo` by
 * src/domain/event-concerns.test.ts and test/store/events-for.test.ts.
 */

/** The columns of an event row these rules read. */
export interface ConcernedEvent {
  readonly type: string;
  readonly subject: string;
  readonly actor_id: string;
  readonly data: unknown;
}

/** The tasks a principal works on: held (a live lease) and/or assigned. */
export interface TaskTie {
  holds: boolean;
  assigned: boolean;
}

/** Whom the events are for. */
export interface Concerned {
  readonly id: string;
  /** The role the person holds (humans only), or null. */
  readonly role: string | null;
  /** Its tasks, by id; kept by `trackTasks` as the events pass. */
  readonly tasks: ReadonlyMap<string, TaskTie>;
}

/** Types of an event about a task that concern the task's holder or assignee (when another wrote it). */
const ABOUT_ITS_TASK = ['task.', 'lease.', 'comment.'] as const;

function field(data: unknown, key: string): unknown {
  return typeof data === 'object' && data !== null ? (data as Record<string, unknown>)[key] : undefined;
}

/** `data.<key>` when a string (what SQL's `data->>'<key>'` compares equal to an id). */
function text(data: unknown, key: string): string | undefined {
  const value = field(data, key);
  return typeof value === 'string' ? value : undefined;
}

/** `data.<key>.id` when a string (SQL's `data->'<key>'->>'id'`). */
function idOf(data: unknown, key: string): string | undefined {
  const value = field(field(data, key), 'id');
  return typeof value === 'string' ? value : undefined;
}

/**
 * The events addressed to a principal, exactly as `eventsFor` (the inbox, `baton wait`) selects
 * them: an ask to it (or, by another, to its role), an answer to its ask, a mention of it, a review
 * decision on its hand-in, a task assigned to it. Except for an ask it sent itself, its own actions
 * are not addressed to it.
 */
export function addressedTo(event: ConcernedEvent, who: { readonly id: string; readonly role: string | null }): boolean {
  const me = who.id;
  const byAnother = event.actor_id !== me;
  const { data } = event;
  switch (event.type) {
    case 'ask.created':
    case 'ask.escalated':
      return text(data, 'to') === me || (byAnother && who.role !== null && text(data, 'to') === `role:${who.role}`);
    case 'ask.answered':
    case 'ask.defaulted':
      return byAnother && text(data, 'asked_by') === me;
    case 'comment.mentioned':
      return byAnother && event.subject === me;
    case 'task.changes_requested':
    case 'task.assigned':
      return byAnother && idOf(data, 'to') === me;
    case 'task.status_changed':
      return byAnother && text(data, 'handed_in_by') === me;
    default:
      return false;
  }
}

/**
 * Whether `event` concerns `who`: it is addressed to it (`addressedTo`); or, by another, it is a
 * task.*, lease.* or comment.* event about one of its tasks (as they stood just before the event),
 * or a lease claimed for it (a reviewer's request for changes hands the task back to its holder).
 */
export function concerns(event: ConcernedEvent, who: Concerned): boolean {
  if (addressedTo(event, who)) return true;
  if (event.actor_id === who.id) return false;
  if (event.type === 'task.claimed' && text(event.data, 'holder_id') === who.id) return true;
  // A task is nobody's before it exists: a stream that resumes judges task.created by the tasks it has now, and must not take it.
  if (event.type === 'task.created') return false;
  return who.tasks.has(event.subject) && ABOUT_ITS_TASK.some((prefix) => event.type.startsWith(prefix));
}

/**
 * Keeps `tasks` (task id → tie) up to date with one event, in commit order: a task joins when `me`
 * claims it or it is assigned to `me`, and leaves when neither holds any more (its lease ended, it
 * was assigned to another) or it ends (done, cancelled, dead-lettered, deleted).
 */
export function trackTasks(tasks: Map<string, TaskTie>, event: ConcernedEvent, me: string): void {
  const task = event.subject;
  const tie = tasks.get(task);
  const untie = (key: keyof TaskTie) => {
    if (!tie) return;
    tie[key] = false;
    if (!tie.holds && !tie.assigned) tasks.delete(task);
  };
  switch (event.type) {
    case 'task.claimed': {
      // A re-claim for changes requested is written by the reviewer for the previous holder.
      const holder = text(event.data, 'holder_id') ?? event.actor_id;
      if (holder === me) tasks.set(task, { holds: true, assigned: tie?.assigned ?? false });
      else untie('holds');
      return;
    }
    case 'task.assigned':
      if (idOf(event.data, 'to') === me) tasks.set(task, { holds: tie?.holds ?? false, assigned: true });
      else untie('assigned');
      return;
    case 'lease.released':
    case 'lease.expired':
      untie('holds');
      return;
    case 'task.status_changed': {
      const to = text(event.data, 'to');
      if (to === 'done' || to === 'cancelled') tasks.delete(task);
      return;
    }
    case 'task.dead_lettered':
    case 'task.deleted':
      tasks.delete(task);
      return;
    default:
      return;
  }
}

/**
 * The ids an event names, to route it by: a stream is woken for it only if one of these is among
 * its `interestKeys`. A superset: every event that concerns a principal, or changes its tasks,
 * names the principal, its role or one of its tasks here.
 */
export function eventKeys(event: ConcernedEvent): string[] {
  const { data } = event;
  const keys = [event.subject];
  for (const key of [text(data, 'to'), idOf(data, 'to'), text(data, 'asked_by'), text(data, 'handed_in_by'), text(data, 'holder_id')]) {
    if (key !== undefined) keys.push(key);
  }
  if (event.type === 'task.claimed') keys.push(event.actor_id);
  return keys;
}

/** The keys (see `eventKeys`) of the events that may concern `who`: itself, its role, its tasks. */
export function interestKeys(who: Concerned): Set<string> {
  const keys = new Set<string>([who.id, ...who.tasks.keys()]);
  if (who.role !== null) keys.add(`role:${who.role}`);
  return keys;
}
