import type { ErrorCode } from '../errors.ts';
import { ROLE_SCOPES } from '../domain/roles.ts';
import type { Scope } from '../domain/scopes.ts';
import type { OperationName } from './index.ts';

/**
 * The authorization model as a table: for every operation, what each kind of principal gets on its
 * own object and on someone else's. The property test (test/security/access-matrix.test.ts) runs
 * every cell over REST, MCP and GraphQL; spec/api.md ("Authorization model") serves it.
 */

/** What a caller gets: the operation runs (2xx), is refused (the problem's status and code), or waits for a human (202 and a pending approval). */
export type Outcome =
  | { readonly kind: 'allowed' }
  | { readonly kind: 'approval' }
  | { readonly kind: 'refused'; readonly status: 403 | 404 | 409; readonly code: ErrorCode | undefined };

/** One outcome; several where either is right (a rule still being settled); null where the caller cannot own such an object. */
export type Cell = Outcome | readonly Outcome[] | null;

/** The answer on the caller's own object and on another principal's. */
export interface ByOwnership {
  readonly own: Cell;
  readonly others: Cell;
}

/**
 * The principals of the table. Agents hold every scope but `agents:admin`, the agent admin every
 * scope, so that only kind and ownership refuse them; the humans hold their role's scopes
 * (src/domain/roles.ts): the human admin every scope (as the bootstrap owner does; an owner differs
 * only in agents_set_role, test/identity/roles.test.ts), the member `MEMBER_SCOPES`, the viewer
 * read scopes. A further column, an agent missing the operation's scope (or a case's own `scope`),
 * is the same for every operation: `withoutScope`.
 */
export const TABLE_PRINCIPALS = ['human_admin', 'human_member', 'human_viewer', 'agent', 'agent_admin'] as const;
export type TablePrincipal = (typeof TABLE_PRINCIPALS)[number];

/**
 * What an operation acts on, and what makes it the caller's own:
 * - `task`: a todo task it created; `artifact`: an artifact it stored;
 * - `lease`: a task in progress under its lease (others': under another agent's);
 * - `assignment`: a todo task assigned to it (others': assigned to another agent);
 * - `hand_in`: a task in review that it handed in; `dead_task`: a task whose attempts it used up;
 * - `comment`: a comment it wrote; `approval`: a request it made; `webhook`: a webhook it created;
 * - `principal`: its own record; `token`: another token of its own; `schedule`: a schedule it created; `template`: a template it created (templates are shared);
 * - `ask`: an open ask addressed to it; `ask_made`: an open ask it made; `budget`: a budget it set (humans only set them).
 * Someone else's object belongs to another agent.
 */
export type OwnedObject = 'task' | 'lease' | 'assignment' | 'hand_in' | 'dead_task' | 'comment' | 'approval' | 'principal' | 'token' | 'webhook' | 'artifact' | 'schedule' | 'template' | 'reservation' | 'ask' | 'ask_made' | 'budget';

export interface AccessCase {
  /** The request the cells are about, in words. */
  readonly request: string;
  /** What it acts on; null: nothing anyone owns (one answer per principal). */
  readonly object: OwnedObject | null;
  /** The viewer's cell may be left out: then it is `viewerCell`'s. */
  readonly cells: Readonly<Record<Exclude<TablePrincipal, 'human_viewer'>, Cell | ByOwnership> & { human_viewer?: Cell | ByOwnership }>;
  /** The rule behind a cell that is not plain scope checking, when it is new or easy to miss. */
  readonly note?: string;
  /** A scope the request needs beyond the operation's: the agent without the scope lacks this one. */
  readonly scope?: Scope;
}

/** An operation's row: its main request, and other requests to it that other rules govern. */
export interface AccessRow extends AccessCase {
  readonly also?: readonly AccessCase[];
}

const ALLOWED: Outcome = { kind: 'allowed' };
const APPROVAL: Outcome = { kind: 'approval' };
function refused(status: 403 | 404 | 409, code?: ErrorCode): Outcome {
  return { kind: 'refused', status, code };
}
const NO_SCOPE = refused(403, 'forbidden_scope');
const HUMANS_ONLY = refused(403, 'human_required');
const ABSENT = refused(404, 'not_found');
const NOT_HOLDER = refused(403, 'not_lease_holder');
/** Separation of duties (BATON_SEPARATION_OF_DUTIES, on by default). */
const OWN_HAND_IN = refused(403, 'separation_of_duties');
/** Another's task, taken or changed by an agent without agents:admin (issue 36 item 1). */
const OTHERS_TASK = { human_admin: ALLOWED, human_member: ALLOWED, agent: owned(ALLOWED, refused(403, 'not_your_task')), agent_admin: ALLOWED };

function owned(own: Cell, others: Cell): ByOwnership {
  return { own, others };
}

function alike(cell: Cell | ByOwnership): AccessCase['cells'] {
  return { human_admin: cell, human_member: cell, agent: cell, agent_admin: cell };
}

/** Humans as one, agents as one. */
function byKind(human: Cell | ByOwnership, agent: Cell | ByOwnership): AccessCase['cells'] {
  return { human_admin: human, human_member: human, agent, agent_admin: agent };
}

/** The principal-administration operations: humans with agents:admin; an agent admin only on itself. */
const ADMIN_ONLY = { human_admin: ALLOWED, human_member: NO_SCOPE, agent: NO_SCOPE };

/** A webhook is its owner's, an agents:admin's and a deciding human's to act on alone; anyone else finds it absent. */
const WEBHOOK = { human_admin: ALLOWED, human_member: owned(null, NO_SCOPE), agent: owned(ALLOWED, ABSENT), agent_admin: ALLOWED };
/** Webhook writes gated for every caller but a human who decides approvals: they choose where events go, or hand out the signing key. */
const WEBHOOK_GATED = { ...WEBHOOK, agent: owned(APPROVAL, ABSENT), agent_admin: APPROVAL };

export const AUTHORIZATION_TABLE: Readonly<Record<OperationName, AccessRow>> = {
  whoami: { request: 'who am I', object: null, cells: alike(ALLOWED) },
  tasks_create: { request: 'create a task', object: null, cells: alike(ALLOWED) },
  tasks_list: { request: 'list tasks', object: null, cells: alike(ALLOWED) },
  tasks_get: { request: 'read a task', object: 'task', cells: alike(ALLOWED) },
  tasks_update: {
    request: 'rename a task in progress',
    object: 'lease',
    cells: byKind(ALLOWED, owned(ALLOWED, NOT_HOLDER)),
    note: "A task in progress is its lease holder's to change; humans may override.",
    also: [
      {
        request: 'move a task in review to done',
        object: 'hand_in',
        cells: alike(owned(OWN_HAND_IN, ALLOWED)),
        // issue 36 item 4
        note: 'Separation of duties: whoever handed the work in may not approve it.',
      },
      {
        request: 'send back work in review',
        object: 'hand_in',
        cells: alike(ALLOWED),
        scope: 'tasks:review',
        // issue 36 item 1
        note: 'A review decision: an agent needs tasks:review, as with tasks_review (403 forbidden_scope without it); a reviewer sends back anyone\'s work.',
      },
      {
        request: 'cancel work in review',
        object: 'hand_in',
        cells: OTHERS_TASK,
        note: "An agent changes only unassigned tasks, its own and those it created; work in review is its hand-in's author's (403 not_your_task otherwise).",
      },
      { request: 'cancel a todo task', object: 'assignment', cells: OTHERS_TASK },
      { request: 'rename a todo task', object: 'assignment', cells: OTHERS_TASK },
    ],
  },
  tasks_delete: {
    request: 'delete a task',
    object: 'task',
    cells: { human_admin: ALLOWED, human_member: APPROVAL, agent: APPROVAL, agent_admin: APPROVAL },
    note: 'Destructive: only a human who decides approvals runs it directly.',
  },
  tasks_claim_next: { request: 'claim the next task (none matches)', object: null, cells: alike(ALLOWED) },
  tasks_claim: {
    request: 'claim a todo task',
    object: 'assignment',
    cells: alike(owned(ALLOWED, refused(409, 'assigned_to_other'))),
    note: 'Only the assignee claims an assigned task, humans included.',
  },
  tasks_events: { request: "read a task's events", object: 'task', cells: alike(ALLOWED) },
  tasks_assign: {
    request: 'assign a task in progress to oneself, ending the lease on it',
    object: 'lease',
    cells: OTHERS_TASK,
    // issue 36 item 1
    note: "Ending someone else's lease, or taking a task assigned to someone else, is for humans and agents:admin; an agent is refused (403 not_your_task).",
    also: [
      {
        request: 'assign a todo task to oneself',
        object: 'assignment',
        cells: OTHERS_TASK,
      },
    ],
  },
  tasks_hand_in: { request: 'hand work in', object: 'lease', cells: byKind(ALLOWED, owned(ALLOWED, NOT_HOLDER)) },
  tasks_review: {
    request: 'approve work in review',
    object: 'hand_in',
    cells: alike(owned(OWN_HAND_IN, ALLOWED)),
    // issue 36 item 4
    note: 'Separation of duties: whoever handed the work in may not approve it.',
  },
  tasks_requeue: { request: 'requeue a dead-lettered task', object: 'dead_task', cells: byKind(ALLOWED, HUMANS_ONLY) },
  comments_list: { request: "list a task's comments", object: 'task', cells: alike(ALLOWED) },
  comments_create: { request: 'comment on a task', object: 'task', cells: alike(ALLOWED) },
  comments_get: { request: 'read a comment', object: 'comment', cells: alike(ALLOWED) },
  comments_update: { request: 'edit a comment', object: 'comment', cells: alike(owned(ALLOWED, refused(403, 'not_comment_author'))) },
  comments_delete: {
    request: 'delete a comment',
    object: 'comment',
    cells: { ...alike(owned(ALLOWED, refused(403, 'not_comment_author'))), human_admin: ALLOWED },
    note: 'A human with agents:admin moderates: deletes any comment.',
  },
  asks_create: { request: 'ask a question on a task', object: 'task', cells: alike(ALLOWED) },
  asks_list: { request: 'list asks', object: null, cells: alike(ALLOWED) },
  asks_get: { request: 'read an ask', object: 'ask', cells: alike(ALLOWED) },
  asks_answer: {
    request: 'answer an ask',
    object: 'ask',
    cells: { human_admin: ALLOWED, human_member: owned(ALLOWED, refused(403, 'not_addressee')), agent: owned(ALLOWED, refused(403, 'not_addressee')), agent_admin: owned(ALLOWED, refused(403, 'not_addressee')) },
    note: "An ask is its addressees' to answer (those it went to so far); a human with agents:admin answers any.",
  },
  asks_cancel: {
    request: 'withdraw an ask',
    object: 'ask_made',
    cells: byKind(ALLOWED, owned(ALLOWED, refused(403, 'not_your_task'))),
    note: 'Its asker withdraws an ask; a human withdraws any.',
  },
  inbox_list: { request: 'read one\'s inbox', object: null, cells: alike(ALLOWED) },
  inbox_mark: { request: 'mark one\'s inbox items', object: null, cells: alike(ALLOWED), note: 'Items not the caller\'s are skipped, never changed.' },
  wait: { request: 'wait for what arrives for one', object: null, cells: alike(ALLOWED) },
  preferences_get: { request: 'read my notification preferences', object: null, cells: byKind(ALLOWED, HUMANS_ONLY) },
  preferences_update: { request: 'change my notification preferences', object: null, cells: byKind(ALLOWED, HUMANS_ONLY) },
  links_redeem: {
    request: 'use a link sent to someone else, or forged',
    object: null,
    cells: alike(refused(404, 'link_invalid')),
    note: "A link works once, for the person it was sent to (links are sent to people only); anyone else's reads as no link (test/asks/notifications.test.ts uses real ones).",
  },
  notifications_list: { request: 'read the notification outbox', object: null, cells: { ...ADMIN_ONLY, agent_admin: ALLOWED } },
  leases_list: { request: 'list leases', object: null, cells: alike(ALLOWED) },
  leases_get: { request: 'read a lease', object: 'lease', cells: byKind(ALLOWED, owned(ALLOWED, ABSENT)) },
  leases_heartbeat: { request: 'renew a lease', object: 'lease', cells: alike(owned(ALLOWED, NOT_HOLDER)) },
  leases_release: { request: 'release a lease', object: 'lease', cells: byKind(ALLOWED, owned(ALLOWED, NOT_HOLDER)) },
  leases_release_many: { request: 'release leases in a batch', object: 'lease', cells: byKind(ALLOWED, owned(ALLOWED, NOT_HOLDER)) },
  leases_cycle: { request: "hand in a lease's task and claim the next", object: 'lease', cells: alike(owned(ALLOWED, NOT_HOLDER)) },
  runs_usage: { request: "report a run's usage", object: 'lease', cells: alike(owned(ALLOWED, NOT_HOLDER)) },
  runs_log: { request: "append to a run's log", object: 'lease', cells: alike(owned(ALLOWED, NOT_HOLDER)) },
  runs_list: { request: 'list runs', object: null, cells: alike(ALLOWED) },
  runs_get: { request: 'read a run', object: 'lease', cells: byKind(ALLOWED, owned(ALLOWED, ABSENT)) },
  budgets_list: { request: 'list budgets', object: null, cells: alike(ALLOWED) },
  budgets_get: { request: 'read a budget', object: 'budget', cells: alike(ALLOWED) },
  budgets_create: { request: 'set a budget', object: null, cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY }, note: 'Budgets are set by humans with the admin or owner role.' },
  budgets_update: { request: 'raise a budget', object: 'budget', cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY }, note: 'Raising or overriding a budget is for humans with the admin or owner role.' },
  budgets_delete: { request: 'delete a budget', object: 'budget', cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY } },
  insight_get: {
    request: 'read the analytics',
    object: null,
    cells: byKind(ALLOWED, HUMANS_ONLY),
    note: "Humans only, any role: the figures name every agent's spending and pace (spec/analytics.md).",
  },
  exports_get: {
    request: 'export runs, usage or events',
    object: null,
    cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY },
    note: 'Audit and finance exports are for humans with the admin or owner role (spec/runs.md).',
  },
  leases_cycle_many: { request: 'cycle leases in a batch', object: 'lease', cells: alike(owned(ALLOWED, NOT_HOLDER)) },
  events_list: { request: 'read the timeline', object: null, cells: alike(ALLOWED) },
  events_stream: { request: 'follow the timeline (REST only)', object: null, cells: alike(ALLOWED) },
  approvals_list: { request: 'list approvals', object: null, cells: alike(ALLOWED) },
  approvals_get: {
    request: 'read an approval',
    object: 'approval',
    cells: { human_admin: owned(null, ALLOWED), human_member: ALLOWED, agent: owned(ALLOWED, ABSENT), agent_admin: owned(ALLOWED, ABSENT) },
    note: 'A human who decides approvals runs gated operations directly, so never has a request of its own.',
  },
  approvals_approve: {
    request: 'approve a request',
    object: 'approval',
    cells: { human_admin: owned(null, ALLOWED), human_member: NO_SCOPE, agent: HUMANS_ONLY, agent_admin: HUMANS_ONLY },
  },
  approvals_deny: {
    request: 'deny a request',
    object: 'approval',
    cells: { human_admin: owned(null, ALLOWED), human_member: NO_SCOPE, agent: HUMANS_ONLY, agent_admin: HUMANS_ONLY },
  },
  agents_list: { request: 'list principals', object: null, cells: { ...ADMIN_ONLY, agent_admin: ALLOWED }, note: 'An agent sees only itself.' },
  directory_list: {
    request: "read the workspace's directory of names",
    object: null,
    cells: alike(ALLOWED),
    note: 'Every caller that reads tasks names the principals they show; only names, kinds, handles and whether disabled (spec/identity.md, "The directory").',
  },
  agents_create: { request: 'create a principal', object: null, cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY } },
  agents_get: { request: 'read a principal', object: 'principal', cells: { ...ADMIN_ONLY, agent_admin: owned(ALLOWED, ABSENT) } },
  agents_update: { request: 'rename a principal', object: 'principal', cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY } },
  tokens_create: { request: 'issue a token', object: 'principal', cells: { ...ADMIN_ONLY, agent_admin: owned(ALLOWED, ABSENT) } },
  tokens_list: { request: "list a principal's tokens", object: 'principal', cells: { ...ADMIN_ONLY, agent_admin: owned(ALLOWED, ABSENT) } },
  tokens_revoke: { request: 'revoke a token', object: 'token', cells: { ...ADMIN_ONLY, agent_admin: owned(ALLOWED, ABSENT) } },
  tokens_rotate: { request: 'rotate a token', object: 'token', cells: { ...ADMIN_ONLY, agent_admin: owned(ALLOWED, ABSENT) } },
  agents_set_role: {
    request: "set a principal's role to admin",
    object: 'principal',
    cells: { ...ADMIN_ONLY, human_admin: owned(ALLOWED, refused(409, 'conflict_state')), agent_admin: HUMANS_ONLY },
    note: 'Roles are for humans: an agent as the target is 409 conflict_state. Only an owner makes an owner or changes one (403 owner_required).',
  },
  sessions_list: { request: 'list my sessions', object: null, cells: byKind(ALLOWED, HUMANS_ONLY), note: "Sessions come from single sign-on, for humans. Another person's: humans with agents:admin only (404 otherwise)." },
  sessions_revoke: {
    request: 'revoke a session that is not mine, or none',
    object: null,
    cells: byKind(ABSENT, HUMANS_ONLY),
    note: "A person revokes their own sessions; a human with agents:admin anyone's; anyone else's is answered 404 (test/identity/sessions.test.ts).",
  },
  workspaces_list: { request: 'list my workspaces', object: null, cells: alike(ALLOWED), note: "Yours only: the current one, and a person's others (row-level security, spec/identity.md \"Workspaces\")." },
  workspaces_create: {
    request: 'create a workspace',
    object: null,
    cells: { ...ADMIN_ONLY, human_admin: refused(403, 'owner_required'), agent_admin: HUMANS_ONLY },
    note: 'Owners only: an admin who is not one is 403 owner_required.',
  },
  workspaces_get: { request: 'read my workspace and its settings', object: null, cells: alike(ALLOWED) },
  workspaces_update: { request: "change my workspace's settings", object: null, cells: { ...ADMIN_ONLY, agent_admin: HUMANS_ONLY }, note: 'Its admins and owners; only the current workspace (row-level security).' },
  artifacts_create: { request: 'store an artifact on a task', object: 'task', cells: alike(ALLOWED) },
  artifacts_get: { request: 'read an artifact', object: 'artifact', cells: alike(ALLOWED) },
  reservations_acquire: { request: 'reserve a resource or paths', object: null, cells: alike(ALLOWED) },
  reservations_list: { request: 'list reservations', object: null, cells: alike(ALLOWED) },
  reservations_get: { request: 'read a reservation', object: 'reservation', cells: alike(ALLOWED) },
  reservations_heartbeat: {
    request: 'renew a reservation',
    object: 'reservation',
    cells: alike(owned(ALLOWED, refused(403, 'not_reservation_holder'))),
    note: 'Only the holder renews a reservation.',
  },
  reservations_release: {
    request: 'release a reservation',
    object: 'reservation',
    cells: { human_admin: ALLOWED, human_member: ALLOWED, agent: owned(ALLOWED, refused(403, 'not_reservation_holder')), agent_admin: ALLOWED },
    note: "A reservation is its holder's, a human's or an agents:admin's to release.",
  },
  schedules_create: { request: 'create a schedule', object: null, cells: alike(ALLOWED) },
  schedules_list: { request: 'list schedules', object: null, cells: alike(ALLOWED) },
  schedules_get: { request: 'read a schedule', object: 'schedule', cells: alike(ALLOWED) },
  schedules_update: {
    request: 'rename a schedule',
    object: 'schedule',
    cells: { human_admin: ALLOWED, human_member: ALLOWED, agent: owned(ALLOWED, refused(403, 'not_schedule_owner')), agent_admin: ALLOWED },
    note: "A schedule is its creator's, a human's or an agents:admin's to change.",
  },
  schedules_delete: { request: 'delete a schedule', object: 'schedule', cells: { human_admin: ALLOWED, human_member: ALLOWED, agent: owned(ALLOWED, refused(403, 'not_schedule_owner')), agent_admin: ALLOWED } },
  templates_create: { request: 'create a template', object: null, cells: alike(ALLOWED) },
  templates_list: { request: 'list templates', object: null, cells: alike(ALLOWED) },
  templates_get: { request: 'read a template', object: 'template', cells: alike(ALLOWED) },
  templates_update: { request: 'rename a template', object: 'template', cells: alike(ALLOWED), note: 'Templates are shared: anyone who may create tasks may change one.' },
  templates_delete: { request: 'delete a template', object: 'template', cells: alike(ALLOWED) },
  templates_instantiate: { request: 'make the tasks of a template', object: 'template', cells: alike(ALLOWED) },
  webhooks_list: { request: 'list webhooks', object: null, cells: { human_admin: ALLOWED, human_member: NO_SCOPE, agent: ALLOWED, agent_admin: ALLOWED } },
  webhooks_create: {
    request: 'create a webhook',
    object: null,
    cells: { human_admin: ALLOWED, human_member: NO_SCOPE, agent: APPROVAL, agent_admin: APPROVAL },
    note: 'Outward: only a human who decides approvals runs it directly.',
  },
  webhooks_get: {
    request: 'read a webhook',
    object: 'webhook',
    cells: WEBHOOK,
    // issue 36 item 5
    note: "Another principal's webhook is answered 404 on every webhook route, reads and writes alike, unless the caller holds agents:admin or is a human who decides approvals.",
  },
  webhooks_update: {
    request: "change a webhook's event types",
    object: 'webhook',
    cells: WEBHOOK_GATED,
    note: 'Outward, like creating one and rotating its secret: gated for its owner and agents:admin too.',
  },
  webhooks_delete: { request: 'delete a webhook', object: 'webhook', cells: WEBHOOK },
  webhooks_deliveries: { request: "read a webhook's deliveries", object: 'webhook', cells: WEBHOOK },
  webhooks_replay: { request: 'replay events to a webhook', object: 'webhook', cells: WEBHOOK },
  webhooks_rotate_secret: { request: "rotate a webhook's secret", object: 'webhook', cells: WEBHOOK_GATED },
};

/**
 * A principal's cell of a case. The viewer's, unless the row states it, is the member's where the
 * viewer role holds every scope the request needs (the operation's and the case's), else 403
 * `forbidden_scope`: a viewer reads what a member reads and writes nothing. A viewer owns no
 * objects (it cannot make one) but its own record.
 */
export function cellOf(access: AccessCase, who: TablePrincipal, operationScope: Scope | null): Cell | ByOwnership {
  if (who !== 'human_viewer') return access.cells[who];
  if (access.cells.human_viewer !== undefined) return access.cells.human_viewer;
  const needed = [operationScope, access.scope ?? null].filter((s): s is Scope => s !== null);
  const member = ownership(access.cells.human_member);
  const answer = (cell: Cell) => (needed.every((s) => ROLE_SCOPES.viewer.includes(s)) ? cell : NO_SCOPE);
  if (access.object === null) return answer(member.others);
  // A viewer makes nothing, so owns nothing but its own record.
  return { own: access.object === 'principal' ? answer(member.own) : null, others: answer(member.others) };
}

/** The fifth column: an agent missing the operation's scope is refused by it, whatever it asks about. */
export function withoutScope(scope: Scope | null): Outcome {
  return scope === null ? ALLOWED : NO_SCOPE;
}

/** A cell's answer on the caller's own object and on another's (the same when ownership does not matter). */
export function ownership(cell: Cell | ByOwnership): ByOwnership {
  return cell !== null && 'own' in cell ? cell : { own: cell, others: cell };
}
