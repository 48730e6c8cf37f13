import { randomUUID } from 'node:crypto';
import { MEMBER_SCOPES, SCOPES, type PrincipalKind, type Scope } from '../../src/domain/scopes.ts';
import { ROLE_SCOPES } from '../../src/domain/roles.ts';
import type { OwnedObject, TablePrincipal } from '../../src/operations/authorization-table.ts';
import type { TestServer } from '../harness.ts';

/** A principal the matrix calls as: its id, kind and one token. */
export interface Actor {
  readonly id: string;
  readonly kind: PrincipalKind;
  readonly token: string;
}

/** An object a request points at: its id, and its task's where the object is a lease. */
export interface Target {
  readonly id: string;
  readonly task: string;
}

const NOT_ADMIN = SCOPES.filter((s) => s !== 'agents:admin');

/** The scopes of each principal of the table (authorization-table.ts says why). */
const PRINCIPAL_SCOPES: Record<TablePrincipal, { kind: PrincipalKind; scopes: readonly Scope[] }> = {
  human_admin: { kind: 'human', scopes: SCOPES },
  human_member: { kind: 'human', scopes: MEMBER_SCOPES },
  human_viewer: { kind: 'human', scopes: ROLE_SCOPES.viewer },
  agent: { kind: 'agent', scopes: NOT_ADMIN },
  agent_admin: { kind: 'agent', scopes: SCOPES },
};

export async function addActor(t: TestServer, name: string, kind: PrincipalKind, scopes: readonly Scope[]): Promise<Actor> {
  const { id, token } = await t.addPrincipal({ kind, scopes, name });
  return { id, kind, token };
}

export function tablePrincipal(t: TestServer, who: TablePrincipal): Promise<Actor> {
  const { kind, scopes } = PRINCIPAL_SCOPES[who];
  return addActor(t, `matrix-${who.replace('_', '-')}`, kind, scopes);
}

/** An agent holding every scope but `scope` and agents:admin: the table's fifth column. */
export function withoutScopeAgent(t: TestServer, scope: Scope): Promise<Actor> {
  return addActor(t, `matrix-without-${scope.replace(':', '-')}`, 'agent', NOT_ADMIN.filter((s) => s !== scope));
}

/** "Someone else": the agent that owns every other principal's object. */
export function strangerAgent(t: TestServer): Promise<Actor> {
  return addActor(t, 'matrix-stranger', 'agent', NOT_ADMIN);
}

/**
 * Makes objects over REST, each owned as authorization-table.ts's `OwnedObject` says. The owner
 * makes it with its own token; the bootstrap admin sets up what the owner needs (a task to claim,
 * an approval of its webhook request, a second token).
 */
export function objectMaker(t: TestServer) {
  const call = async <T>(method: string, url: string, token: string | undefined, body: unknown, status: number): Promise<T> => {
    const res = await t.request(method, url, { ...(token === undefined ? {} : { token }), ...(method === 'GET' || method === 'DELETE' ? {} : { body }) });
    if (res.status !== status) throw new Error(`making a fixture: ${method} ${url} answered ${res.status}, not ${status}: ${res.body}`);
    return res.json<T>();
  };
  type Made = { id: string; lease: { id: string } };
  const adminTask = (extra: Record<string, unknown> = {}) => call<Made>('POST', '/api/v1/tasks', undefined, { title: 'matrix fixture', ...extra }, 201);
  const claim = (task: string, owner: Actor) => call<Made>('POST', `/api/v1/tasks/${task}/claim`, owner.token, {}, 200);
  const lease = async (owner: Actor): Promise<Target> => {
    const task = await adminTask();
    return { id: (await claim(task.id, owner)).lease.id, task: task.id };
  };
  const make: Record<OwnedObject, (owner: Actor) => Promise<Target>> = {
    task: async (owner) => idOnly(await call<Made>('POST', '/api/v1/tasks', owner.token, { title: 'matrix task' }, 201)),
    artifact: async (owner) => idOnly(await call<Made>('POST', '/api/v1/artifacts', owner.token, { content: 'matrix notes' }, 201)),
    lease,
    assignment: async (owner) => idOnly(await adminTask({ assignee: owner.id })),
    hand_in: async (owner) => {
      const held = await lease(owner);
      await call('POST', `/api/v1/tasks/${held.task}/hand_in`, owner.token, { summary: 'matrix hand-in' }, 200);
      return idOnly({ id: held.task });
    },
    dead_task: async (owner) => {
      const task = await adminTask({ max_attempts: 1 });
      const claimed = await claim(task.id, owner);
      await call('POST', `/api/v1/leases/${claimed.lease.id}/release`, owner.token, { outcome: 'failed', reason: 'matrix failure' }, 200);
      return idOnly(task);
    },
    comment: async (owner) => {
      const task = await adminTask();
      return { id: (await call<Made>('POST', `/api/v1/tasks/${task.id}/comments`, owner.token, { body: 'matrix comment' }, 201)).id, task: task.id };
    },
    approval: async (owner) => {
      const task = await adminTask();
      return { id: (await call<Made>('DELETE', `/api/v1/tasks/${task.id}`, owner.token, undefined, 202)).id, task: task.id };
    },
    ask: async (owner) => {
      const task = await adminTask();
      const body = { question: 'Ship it?', options: [{ label: 'yes' }, { label: 'no' }], to: owner.id, timeout_s: 3600, default: { option: 'no' } };
      return { id: (await call<Made>('POST', `/api/v1/tasks/${task.id}/asks`, undefined, body, 201)).id, task: task.id };
    },
    ask_made: async (owner) => {
      const task = await adminTask();
      const body = { question: 'Which way?', to: owner.id, timeout_s: 3600, default: { text: 'left' } };
      return { id: (await call<Made>('POST', `/api/v1/tasks/${task.id}/asks`, owner.token, body, 201)).id, task: task.id };
    },
    principal: (owner) => Promise.resolve({ id: owner.id, task: '' }),
    token: async (owner) => idOnly(await call<Made>('POST', `/api/v1/agents/${owner.id}/tokens`, undefined, { machine: `matrix-${randomUUID().slice(0, 8)}` }, 201)),
    reservation: async (owner) => idOnly(await call<Made>('POST', '/api/v1/reservations', owner.token, { resource: `matrix-${randomUUID()}` }, 201)),
    // Only a human admin sets a budget: the bootstrap admin makes it, whoever the owner.
    budget: async () => idOnly(await call<Made>('POST', '/api/v1/budgets', undefined, { name: 'matrix budget', applies_to: 'label', target: 'matrix-budget', unit: 'runs', limit: 1000 }, 201)),
    schedule: async (owner) => idOnly(await call<Made>('POST', '/api/v1/schedules', owner.token, { name: 'matrix schedule', cron: '0 9 * * *', task: { title: 'matrix' }, enabled: false }, 201)),
    template: async (owner) => idOnly(await call<Made>('POST', '/api/v1/templates', owner.token, MATRIX_TEMPLATE, 201)),
    webhook: async (owner) => {
      const body = { url: 'http://127.0.0.1:9/matrix', enabled: false };
      const res = await t.request('POST', '/api/v1/webhooks', { token: owner.token, body });
      if (res.status === 201) return idOnly(res.json<Made>());
      if (res.status !== 202) throw new Error(`making a fixture: POST /api/v1/webhooks answered ${res.status}: ${res.body}`);
      const approved = await call<{ result: { body: Made } }>('POST', `/api/v1/approvals/${res.json<Made>().id}/approve`, undefined, {}, 200);
      return idOnly(approved.result.body);
    },
  };
  return make;
}

/** A template of one task with one parameter, for the matrix. */
export const MATRIX_TEMPLATE = { name: 'matrix template', parameters: [{ name: 'what' }], tasks: [{ key: 'one', title: 'Matrix {{what}}' }] };

function idOnly(made: { id: string }): Target {
  return { id: made.id, task: '' };
}
