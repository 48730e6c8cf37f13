import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { linkKey, newLinkId, signLink } from '../../src/notification-link.ts';
import type { Operation } from '../../src/operations/define-operation.ts';
import { readCursorKey } from '../../src/store/server-keys.ts';
import type { Response, TestServer } from '../harness.ts';

/** Objects every operation's request can point at, made over HTTP by the bootstrap admin (who holds the lease). */
export interface Fixtures {
  /** A notification link (spec/notifications.md) sent to the admin, unused. */
  readonly link: string;
  /** A todo task, unclaimed. */
  readonly task: string;
  /** An active lease held by the admin. */
  readonly lease: string;
  /** A pending approval: an agent asked to delete a task. */
  readonly approval: string;
  /** An agent made through the API, with one token. */
  readonly agent: string;
  readonly token: string;
  /** A text artifact attached to `task`. */
  readonly artifact: string;
  /** A disabled webhook (nothing is delivered), and an event id to replay from. */
  readonly webhook: string;
  readonly event: string;
  /** The task `lease` holds (in progress, held by the admin). */
  readonly heldTask: string;
  /** A task handed in for review (in_review), last held by the admin. */
  readonly reviewTask: string;
  /** A comment on `task` by the admin. */
  readonly comment: string;
  /** A task whose only attempt failed: in the dead-letter. */
  readonly deadTask: string;
  /** A person who signed in with single sign-on (a member), and their live session. */
  readonly person: string;
  readonly session: string;
  /** Two open asks on `task`, by the admin to the admin: one to answer, one to withdraw. */
  readonly ask: string;
  readonly askToCancel: string;
  /** The bootstrap admin's principal id. */
  readonly admin: string;
  /** A paused schedule the admin created. */
  readonly schedule: string;
  /** A template of one task with one parameter. */
  readonly template: string;
  /** An exclusive reservation of a resource of its own, held by the admin. */
  readonly reservation: string;
  /** A label budget (runs) on a label no task carries. */
  readonly budget: string;
}

/** A request minus method and path, which come from the operation's `http` binding. */
export interface OperationRequest {
  readonly params?: Record<string, string>;
  readonly query?: string;
  readonly body?: Record<string, unknown>;
}

/**
 * A valid request for every operation in the registry, by name. The authorization matrix fails for
 * an operation missing here: a new operation needs its entry before it can ship.
 */
export const operationRequests: Readonly<Record<string, (fx: Fixtures) => OperationRequest>> = {
  whoami: () => ({}),
  'tasks_create': () => ({ body: { title: 'Made by the matrix' } }),
  'tasks_list': () => ({ query: 'limit=5' }),
  'tasks_get': (fx) => ({ params: { id: fx.task } }),
  'tasks_update': (fx) => ({ params: { id: fx.task }, body: { title: 'Renamed by the matrix' } }),
  'tasks_delete': (fx) => ({ params: { id: fx.task } }),
  'tasks_claim_next': () => ({ body: {} }),
  'tasks_claim': (fx) => ({ params: { id: fx.task }, body: {} }),
  'tasks_events': (fx) => ({ params: { id: fx.task } }),
  'tasks_assign': (fx) => ({ params: { id: fx.task }, body: { assignee: fx.agent, comment: 'Yours now.' } }),
  'tasks_hand_in': (fx) => ({ params: { id: fx.heldTask }, body: { summary: 'Done by the matrix.', artifacts: [fx.artifact] } }),
  'tasks_requeue': (fx) => ({ params: { id: fx.deadTask } }),
  'tasks_review': (fx) => ({ params: { id: fx.reviewTask }, body: { decision: 'request_changes', comment: 'One more test, please.' } }),
  'comments_list': (fx) => ({ params: { id: fx.task }, query: 'limit=5' }),
  'comments_create': (fx) => ({ params: { id: fx.task }, body: { body: 'A word from the matrix.' } }),
  'comments_get': (fx) => ({ params: { id: fx.comment } }),
  'comments_update': (fx) => ({ params: { id: fx.comment }, body: { body: 'Edited by the matrix.' } }),
  'comments_delete': (fx) => ({ params: { id: fx.comment } }),
  'asks_create': (fx) => ({ params: { id: fx.task }, body: { question: 'Ship it?', options: [{ label: 'yes' }, { label: 'no' }], to: fx.admin, timeout_s: 600, default: { option: 'no' } } }),
  'asks_list': (fx) => ({ query: `task_id=${fx.task}&status=open` }),
  'asks_get': (fx) => ({ params: { id: fx.ask } }),
  'asks_answer': (fx) => ({ params: { id: fx.ask }, body: { option: 'yes' } }),
  'asks_cancel': (fx) => ({ params: { id: fx.askToCancel } }),
  'inbox_list': () => ({ query: 'state=unread&limit=5' }),
  'inbox_mark': () => ({ body: { ids: ['inb_01J0000000000000000000000A'], state: 'done' } }),
  'wait': () => ({ query: 'timeout_s=0&work=no' }),
  'leases_list': () => ({ query: 'holder=me' }),
  'leases_get': (fx) => ({ params: { id: fx.lease } }),
  'leases_heartbeat': (fx) => ({ params: { id: fx.lease }, body: { note: 'still here' } }),
  'leases_release': (fx) => ({ params: { id: fx.lease }, body: {} }),
  'leases_release_many': (fx) => ({ body: { ids: [fx.lease], note: 'handing the batch back' } }),
  // A label no task carries: the next claim is empty, so two runs on one database answer alike.
  'leases_cycle': (fx) => ({ params: { id: fx.lease }, body: { summary: 'done', labels: ['none-such'] } }),
  'leases_cycle_many': (fx) => ({ body: { leases: [{ id: fx.lease, summary: 'done' }], labels: ['none-such'] } }),
  'events_list': () => ({ query: 'limit=5' }),
  'events_stream': () => ({ query: 'types=task.created' }),
  'approvals_list': () => ({ query: 'status=pending' }),
  'approvals_get': (fx) => ({ params: { id: fx.approval } }),
  'approvals_approve': (fx) => ({ params: { id: fx.approval }, body: { reason: 'fine' } }),
  'approvals_deny': (fx) => ({ params: { id: fx.approval }, body: { reason: 'no' } }),
  'agents_list': () => ({}),
  'directory_list': (fx) => ({ query: `ids=${fx.agent}` }),
  'agents_create': () => ({ body: { name: 'made-by-matrix', scopes: ['tasks:read'] } }),
  'agents_get': (fx) => ({ params: { id: fx.agent } }),
  'agents_update': (fx) => ({ params: { id: fx.agent }, body: { name: 'renamed-by-matrix' } }),
  'tokens_create': (fx) => ({ params: { id: fx.agent }, body: { machine: `m-${randomUUID().slice(0, 8)}` } }),
  'tokens_list': (fx) => ({ params: { id: fx.agent } }),
  'tokens_revoke': (fx) => ({ params: { id: fx.token } }),
  'tokens_rotate': (fx) => ({ params: { id: fx.token }, body: {} }),
  'agents_set_role': (fx) => ({ params: { id: fx.person }, body: { role: 'viewer' } }),
  'sessions_list': (fx) => ({ query: `agent_id=${fx.person}` }),
  'workspaces_list': () => ({}),
  'workspaces_create': () => ({ body: { name: `matrix ${randomUUID()}` } }),
  'workspaces_get': () => ({}),
  'workspaces_update': () => ({ body: { rate_limit: null } }),
  'preferences_get': () => ({}),
  'preferences_update': () => ({ body: { email: 'immediate' } }),
  'links_redeem': (fx) => ({ body: { token: fx.link } }),
  // No one's: pending notifications are the sender worker's to move on at any moment, so two calls a few ms apart may see different sets.
  'notifications_list': () => ({ query: 'state=pending&principal_id=agt_00000000000000000000000000' }),
  'sessions_revoke': (fx) => ({ params: { id: fx.session } }),
  'artifacts_create': (fx) => ({ body: { content: 'Notes from the matrix.', task_id: fx.task } }),
  'artifacts_get': (fx) => ({ params: { id: fx.artifact }, query: 'content=utf8' }),
  'reservations_acquire': () => ({ body: { resource: `fixture-${randomUUID()}`, ttl_s: 60 } }),
  'reservations_list': () => ({ query: 'state=all' }),
  'reservations_get': (fx) => ({ params: { id: fx.reservation } }),
  'reservations_heartbeat': (fx) => ({ params: { id: fx.reservation }, body: {} }),
  'reservations_release': (fx) => ({ params: { id: fx.reservation }, body: {} }),
  'runs_usage': (fx) => ({ params: { id: fx.lease }, body: { input_tokens: 120, output_tokens: 40 } }),
  'runs_log': (fx) => ({ params: { id: fx.lease }, body: { lines: ['matrix log line'] } }),
  'runs_get': (fx) => ({ params: { id: fx.lease } }),
  'runs_list': () => ({}),
  'budgets_create': () => ({ body: { name: 'matrix budget', applies_to: 'label', target: 'matrix-budget', unit: 'runs', limit: 1000 } }),
  'budgets_list': () => ({}),
  'budgets_get': (fx) => ({ params: { id: fx.budget } }),
  'budgets_update': (fx) => ({ params: { id: fx.budget }, body: { limit: 2000 } }),
  'budgets_delete': (fx) => ({ params: { id: fx.budget } }),
  'insight_get': () => ({ query: 'by=agent' }),
  'exports_get': () => ({ params: { dataset: 'events' }, query: 'from=2026-01-01&to=2030-01-01' }),
  'webhooks_list': () => ({}),
  'schedules_create': () => ({ body: { name: 'matrix schedule', cron: '0 9 * * 1-5', task: { title: 'Made by the matrix' }, enabled: false } }),
  'schedules_list': () => ({}),
  'schedules_get': (fx) => ({ params: { id: fx.schedule } }),
  'schedules_update': (fx) => ({ params: { id: fx.schedule }, body: { name: 'renamed by the matrix' } }),
  'schedules_delete': (fx) => ({ params: { id: fx.schedule } }),
  'templates_create': () => ({ body: { name: 'matrix template', parameters: [{ name: 'what' }], tasks: [{ key: 'one', title: 'Matrix {{what}}' }] } }),
  'templates_list': () => ({}),
  'templates_get': (fx) => ({ params: { id: fx.template } }),
  'templates_update': (fx) => ({ params: { id: fx.template }, body: { name: 'renamed by the matrix' } }),
  'templates_delete': (fx) => ({ params: { id: fx.template } }),
  'templates_instantiate': (fx) => ({ params: { id: fx.template }, body: { params: { what: 'made' } } }),
  'webhooks_create': () => ({ body: { url: 'http://127.0.0.1:9/matrix', enabled: false } }),
  'webhooks_get': (fx) => ({ params: { id: fx.webhook } }),
  'webhooks_update': (fx) => ({ params: { id: fx.webhook }, body: { event_types: ['task.created'] } }),
  'webhooks_delete': (fx) => ({ params: { id: fx.webhook } }),
  'webhooks_deliveries': (fx) => ({ params: { id: fx.webhook } }),
  'webhooks_rotate_secret': (fx) => ({ params: { id: fx.webhook }, body: {} }),
  'webhooks_replay': (fx) => ({ params: { id: fx.webhook }, query: `since=${fx.event}`, body: {} }),
};

/** Makes a fresh set of fixtures. */
export async function makeFixtures(t: TestServer): Promise<Fixtures> {
  const ok = async (res: Promise<Response>, status: number) => {
    const r = await res;
    expect(r.status, r.body).toBe(status);
    return r.json<{ id: string; lease: { id: string } }>();
  };
  const task = await ok(t.request('POST', '/api/v1/tasks', { body: { title: 'fixture task' } }), 201);
  const held = await ok(t.request('POST', '/api/v1/tasks', { body: { title: 'fixture held task' } }), 201);
  const claim = await ok(t.request('POST', `/api/v1/tasks/${held.id}/claim`, { body: {} }), 200);
  const doomed = await ok(t.request('POST', '/api/v1/tasks', { body: { title: 'fixture task to delete on approval' } }), 201);
  const requester = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
  const approval = await ok(t.request('DELETE', `/api/v1/tasks/${doomed.id}`, { token: requester.token }), 202);
  const agent = await ok(t.request('POST', '/api/v1/agents', { body: { name: 'fixture-agent', scopes: ['tasks:read'] } }), 201);
  const token = await ok(t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'fixture-machine' } }), 201);
  const artifact = await ok(t.request('POST', '/api/v1/artifacts', { body: { content: 'fixture notes', task_id: task.id } }), 201);
  const webhook = await ok(t.request('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/fixture', enabled: false } }), 201);
  const reviewTask = await ok(t.request('POST', '/api/v1/tasks', { body: { title: 'fixture task in review' } }), 201);
  await ok(t.request('POST', `/api/v1/tasks/${reviewTask.id}/claim`, { body: {} }), 200);
  await ok(t.request('POST', `/api/v1/tasks/${reviewTask.id}/hand_in`, { body: { summary: 'fixture hand-in' } }), 200);
  const deadTask = await ok(t.request('POST', '/api/v1/tasks', { body: { title: 'fixture dead-lettered task', max_attempts: 1 } }), 201);
  const doomedClaim = await ok(t.request('POST', `/api/v1/tasks/${deadTask.id}/claim`, { body: {} }), 200);
  await ok(t.request('POST', `/api/v1/leases/${doomedClaim.lease.id}/release`, { body: { outcome: 'failed', reason: 'fixture failure' } }), 200);
  const comment = await ok(t.request('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'fixture comment' } }), 201);
  const admin = (await t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>().principal.id;
  const askBody = { question: 'Fixture question?', options: [{ label: 'yes' }, { label: 'no' }], to: admin, timeout_s: 3600, default: { option: 'no' } };
  const ask = await ok(t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: askBody }), 201);
  const askToCancel = await ok(t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: askBody }), 201);
  const schedule = await ok(t.request('POST', '/api/v1/schedules', { body: { name: 'fixture schedule', cron: '0 9 * * *', task: { title: 'fixture' }, enabled: false } }), 201);
  const template = await ok(t.request('POST', '/api/v1/templates', { body: { name: 'fixture template', parameters: [{ name: 'what' }], tasks: [{ key: 'one', title: 'Fixture {{what}}' }] } }), 201);
  const reservation = await ok(t.request('POST', '/api/v1/reservations', { body: { resource: `fixture-${randomUUID()}` } }), 201);
  const budget = await ok(t.request('POST', '/api/v1/budgets', { body: { name: 'fixture budget', applies_to: 'label', target: 'fixture-budget', unit: 'runs', limit: 1000 } }), 201);
  const events = await t.request('GET', '/api/v1/events?order=desc&limit=1');
  const event = events.json<{ data: { id: string }[] }>().data[0]?.id ?? '';
  const adminId = (await t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>().principal.id;
  // Far from expiring, whatever a suite's clock says.
  const link = signLink(linkKey(await readCursorKey(t.database.db)), { id: newLinkId(), to: adminId, task: task.id, item: 'inb_fixture', exp: Math.floor(Date.now() / 1000) + 10 * 365 * 86_400 });
  const signedIn = await t.server.service.signIn({ issuer: 'https://idp.example', subject: `fixture-${randomUUID()}`, name: 'Fixture Person', email: null, emailVerified: false, roleValues: [] }, 'fixture');
  return { link, person: signedIn.agentId, session: signedIn.sessionId, task: task.id, lease: claim.lease.id, approval: approval.id, agent: agent.id, token: token.id, artifact: artifact.id, webhook: webhook.id, event, heldTask: held.id, reviewTask: reviewTask.id, comment: comment.id, deadTask: deadTask.id, ask: ask.id, askToCancel: askToCancel.id, admin, schedule: schedule.id, template: template.id, reservation: reservation.id, budget: budget.id };
}

/** Sends the operation's request with its own method and path (path parameters filled in), as `token` (null: none). */
export function sendOperation(
  t: TestServer,
  operation: Operation,
  request: OperationRequest,
  token: string | null,
  headers: Record<string, string> = {},
): Promise<Response> {
  const path = operation.http.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = request.params?.[name];
    if (value === undefined) throw new Error(`${operation.name}: no value for path parameter {${name}}`);
    return encodeURIComponent(value);
  });
  const url = `/api/v1${path}${request.query ? `?${request.query}` : ''}`;
  const hasBody = operation.http.method === 'POST' || operation.http.method === 'PATCH';
  return t.request(operation.http.method, url, { token, headers, ...(hasBody ? { body: request.body ?? {} } : {}) });
}
