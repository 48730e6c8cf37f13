import { randomUUID } from 'node:crypto';
import type { OperationName } from '../../src/operations/index.ts';
import { type Actor, MATRIX_TEMPLATE, type Target } from './access-fixtures.ts';

/** What a request is built from: the object it points at (absent when the case has none), the caller, and an event id to replay from. */
export interface RequestContext {
  readonly target: Target;
  readonly caller: Actor;
  readonly event: string;
}

/** One request of the matrix: its input (path, query and body alike), and whether a success uses its object up. */
export interface AccessRequest {
  readonly input: (c: RequestContext) => Record<string, unknown>;
  /** A success changes the object so the next call could not be the same: each call gets a fresh one. */
  readonly consumes?: boolean;
}

/** A label no task carries: claims that take the next task find none, so no fixture is taken. */
const NONE = ['matrix-none'];

/**
 * The requests of the matrix, in the order of the row's cases (authorization-table.ts: the row,
 * then its `also`). List filters are left out: their shapes differ between interfaces.
 */
export const ACCESS_REQUESTS: Record<OperationName, readonly AccessRequest[]> = {
  whoami: [{ input: () => ({}) }],
  tasks_create: [{ input: () => ({ title: 'Made by the access matrix' }) }],
  tasks_list: [{ input: () => ({ limit: 5 }) }],
  tasks_get: [{ input: ({ target }) => ({ id: target.id }) }],
  tasks_update: [
    { input: ({ target }) => ({ id: target.task, title: 'Renamed by the access matrix' }) },
    { input: ({ target }) => ({ id: target.id, status: 'done' }), consumes: true },
    { input: ({ target }) => ({ id: target.id, status: 'in_progress' }), consumes: true },
    { input: ({ target }) => ({ id: target.id, status: 'cancelled' }), consumes: true },
    { input: ({ target }) => ({ id: target.id, status: 'cancelled' }), consumes: true },
    { input: ({ target }) => ({ id: target.id, title: 'Renamed by the access matrix' }) },
  ],
  tasks_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  tasks_claim_next: [{ input: () => ({ labels: NONE }) }],
  tasks_claim: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  tasks_events: [{ input: ({ target }) => ({ id: target.id }) }],
  tasks_assign: [
    { input: ({ target, caller }) => ({ id: target.task, assignee: caller.id, release_lease: true }), consumes: true },
    { input: ({ target, caller }) => ({ id: target.id, assignee: caller.id }), consumes: true },
  ],
  tasks_hand_in: [{ input: ({ target }) => ({ id: target.task, summary: 'Done by the access matrix.' }), consumes: true }],
  tasks_review: [{ input: ({ target }) => ({ id: target.id, decision: 'approve' }), consumes: true }],
  tasks_requeue: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  comments_list: [{ input: ({ target }) => ({ id: target.id }) }],
  comments_create: [{ input: ({ target }) => ({ id: target.id, body: 'A word from the access matrix.' }) }],
  comments_get: [{ input: ({ target }) => ({ id: target.id }) }],
  comments_update: [{ input: ({ target }) => ({ id: target.id, body: 'Edited by the access matrix.' }) }],
  comments_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  asks_create: [{ input: ({ target, caller }) => ({ id: target.id, question: 'Ready?', to: caller.id, timeout_s: 600, default: { text: 'no' } }) }],
  asks_list: [{ input: () => ({ limit: 5 }) }],
  asks_get: [{ input: ({ target }) => ({ id: target.id }) }],
  asks_answer: [{ input: ({ target }) => ({ id: target.id, option: 'yes' }), consumes: true }],
  asks_cancel: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  inbox_list: [{ input: () => ({ limit: 5 }) }],
  inbox_mark: [{ input: () => ({ ids: ['inb_01J0000000000000000000000A'], state: 'read' }) }],
  wait: [{ input: () => ({ timeout_s: 0, work: 'no' }) }],
  leases_list: [{ input: () => ({}) }],
  leases_get: [{ input: ({ target }) => ({ id: target.id }) }],
  leases_heartbeat: [{ input: ({ target }) => ({ id: target.id, note: 'still here' }) }],
  leases_release: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  leases_release_many: [{ input: ({ target }) => ({ ids: [target.id] }), consumes: true }],
  leases_cycle: [{ input: ({ target }) => ({ id: target.id, summary: 'done', labels: NONE }), consumes: true }],
  runs_usage: [{ input: ({ target }) => ({ id: target.id, input_tokens: 10, cost: 0.01 }) }],
  runs_log: [{ input: ({ target }) => ({ id: target.id, lines: ['a line from the access matrix'] }) }],
  runs_list: [{ input: () => ({ limit: 5 }) }],
  runs_get: [{ input: ({ target }) => ({ id: target.id }) }],
  insight_get: [{ input: () => ({ by: 'day' }) }],
  exports_get: [{ input: () => ({ dataset: 'runs', from: '2026-01-01', to: '2030-01-01' }) }],
  leases_cycle_many: [{ input: ({ target }) => ({ leases: [{ id: target.id, summary: 'done' }], labels: NONE }), consumes: true }],
  events_list: [{ input: () => ({ limit: 5 }) }],
  events_stream: [{ input: () => ({}) }],
  approvals_list: [{ input: () => ({ limit: 5 }) }],
  approvals_get: [{ input: ({ target }) => ({ id: target.id }) }],
  approvals_approve: [{ input: ({ target }) => ({ id: target.id, reason: 'fine' }), consumes: true }],
  approvals_deny: [{ input: ({ target }) => ({ id: target.id, reason: 'no' }), consumes: true }],
  agents_list: [{ input: () => ({}) }],
  directory_list: [{ input: () => ({ limit: 5 }) }],
  agents_create: [{ input: () => ({ name: 'made-by-the-matrix', scopes: ['tasks:read'] }) }],
  agents_get: [{ input: ({ target }) => ({ id: target.id }) }],
  agents_update: [{ input: ({ target }) => ({ id: target.id, name: `renamed-${randomUUID().slice(0, 8)}` }) }],
  tokens_create: [{ input: ({ target }) => ({ id: target.id, machine: `matrix-${randomUUID().slice(0, 8)}` }) }],
  tokens_list: [{ input: ({ target }) => ({ id: target.id }) }],
  tokens_revoke: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  tokens_rotate: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  agents_set_role: [{ input: ({ target }) => ({ id: target.id, role: 'admin' }) }],
  sessions_list: [{ input: () => ({}) }],
  workspaces_list: [{ input: () => ({}) }],
  workspaces_create: [{ input: () => ({ name: `probe ${randomUUID()}` }) }],
  workspaces_get: [{ input: () => ({}) }],
  workspaces_update: [{ input: () => ({ escalate_review_s: null }) }],
  preferences_get: [{ input: () => ({}) }],
  preferences_update: [{ input: () => ({ chat: true }) }],
  links_redeem: [{ input: () => ({ token: 'eyJpZCI6ImZvcmdlZCJ9.forged' }) }],
  notifications_list: [{ input: () => ({}) }],
  sessions_revoke: [{ input: () => ({ id: 'ses_01JZZZZZZZZZZZZZZZZZZZZZZZ' }) }],
  artifacts_create: [{ input: ({ target }) => ({ content: 'Notes from the access matrix.', task_id: target.id }) }],
  artifacts_get: [{ input: ({ target }) => ({ id: target.id, content: 'utf8' }) }],
  reservations_acquire: [{ input: () => ({ resource: `matrix-${randomUUID()}`, ttl_s: 60 }) }],
  reservations_list: [{ input: () => ({}) }],
  reservations_get: [{ input: ({ target }) => ({ id: target.id }) }],
  reservations_heartbeat: [{ input: ({ target }) => ({ id: target.id }) }],
  reservations_release: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  budgets_create: [{ input: () => ({ name: 'matrix budget', applies_to: 'label', target: 'matrix-budget', unit: 'runs', limit: 1000 }) }],
  budgets_list: [{ input: () => ({}) }],
  budgets_get: [{ input: ({ target }) => ({ id: target.id }) }],
  budgets_update: [{ input: ({ target }) => ({ id: target.id, limit: 2000 }) }],
  budgets_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  schedules_create: [{ input: () => ({ name: 'matrix schedule', cron: '0 9 * * *', task: { title: 'matrix' }, enabled: false }) }],
  schedules_list: [{ input: () => ({}) }],
  schedules_get: [{ input: ({ target }) => ({ id: target.id }) }],
  schedules_update: [{ input: ({ target }) => ({ id: target.id, name: 'renamed by the matrix' }) }],
  schedules_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  templates_create: [{ input: () => ({ ...MATRIX_TEMPLATE }) }],
  templates_list: [{ input: () => ({}) }],
  templates_get: [{ input: ({ target }) => ({ id: target.id }) }],
  templates_update: [{ input: ({ target }) => ({ id: target.id, name: 'renamed by the matrix' }) }],
  templates_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  templates_instantiate: [{ input: ({ target }) => ({ id: target.id, params: { what: 'instantiated' }, dry_run: true }) }],
  webhooks_list: [{ input: () => ({}) }],
  webhooks_create: [{ input: () => ({ url: 'http://127.0.0.1:9/matrix', enabled: false }) }],
  webhooks_get: [{ input: ({ target }) => ({ id: target.id }) }],
  webhooks_update: [{ input: ({ target }) => ({ id: target.id, event_types: ['task.created'] }) }],
  webhooks_delete: [{ input: ({ target }) => ({ id: target.id }), consumes: true }],
  webhooks_deliveries: [{ input: ({ target }) => ({ id: target.id }) }],
  webhooks_replay: [{ input: ({ target, event }) => ({ id: target.id, since: event }) }],
  webhooks_rotate_secret: [{ input: ({ target }) => ({ id: target.id }) }],
};
