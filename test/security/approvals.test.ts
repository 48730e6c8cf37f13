import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/domain/scopes.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsAbout, expectProblem, principalWithToken, whoami } from './helpers.ts';

/** The approval gate on a destructive operation (tasks_delete), through HTTP. */

interface Approval {
  id: string;
  status: string;
  operation: string;
  input: Record<string, unknown>;
  target: { id: string; version: number } | null;
  requested_by: { id: string; kind: string };
  decided_by: { id: string; kind: string } | null;
  result: { status: number; body: { id?: string; deleted_at?: string | null } } | null;
}

let t: TestServer;
let agent: { id: string; token: string; tokenId: string };
let admin2: { id: string; token: string; tokenId: string };
let adminId: string;
const AGENT_SCOPES: Scope[] = ['tasks:read', 'tasks:write', 'events:read'];

beforeAll(async () => {
  t = await startTestServer();
  adminId = (await whoami(t, t.adminToken)).principal.id;
  agent = await principalWithToken(t, { name: 'cleaner', scopes: AGENT_SCOPES }, 'cleaner-box');
  admin2 = await principalWithToken(t, { name: 'second admin', kind: 'human', scopes: [...SCOPES] });
});
afterAll(() => t.close());

/** The agent asks to delete a new task; returns the task and the pending approval. */
async function requestDeletion(title: string, key?: string): Promise<{ task: { id: string; version: number }; approval: Approval }> {
  const task = await createTask(t, title);
  const res = await t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token, ...(key ? { key } : {}) });
  expect(res.status, res.body).toBe(202);
  return { task, approval: res.json<Approval>() };
}

const approvalsFor = async (taskId: string) =>
  (await t.request('GET', '/api/v1/approvals?limit=100')).json<{ data: Approval[] }>().data.filter((a) => a.target?.id === taskId);

describe('an agent deleting a task', () => {
  it('gets 202 with a pending approval bound to the task version; the task is still there', async () => {
    const { task, approval } = await requestDeletion('asked to be deleted');
    expect(approval).toMatchObject({
      status: 'pending',
      operation: 'tasks_delete',
      input: { id: task.id },
      target: { id: task.id, version: task.version },
      requested_by: { id: agent.id, kind: 'agent' },
      requested_machine: 'cleaner-box',
      decided_by: null,
      result: null,
    });
    expect(approval.id).toMatch(/^apr_/);
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token })).status).toBe(200);
    expect((await eventsAbout(t, task.id)).map((e) => e.type)).toEqual(['task.created']);
    const pending = (await t.request('GET', '/api/v1/approvals?status=pending&limit=100')).json<{ data: Approval[] }>().data;
    expect(pending.map((a) => a.id)).toContain(approval.id);
  });

  it('replayed with the same Idempotency-Key returns the same 202 body and makes no second approval', async () => {
    const key = randomUUID();
    const first = await requestDeletion('asked twice', key);
    const again = await t.request('DELETE', `/api/v1/tasks/${first.task.id}`, { token: agent.token, key });
    expect(again.status, again.body).toBe(202);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json()).toEqual(first.approval);
    expect((await approvalsFor(first.task.id)).map((a) => a.id)).toEqual([first.approval.id]);
    expect((await eventsAbout(t, first.approval.id)).map((e) => e.type)).toEqual(['approval.requested']);
  });

  it('by a human without approvals:decide is gated too: 202', async () => {
    const human = await principalWithToken(t, { name: 'no decide', kind: 'human', scopes: SCOPES.filter((s) => s !== 'approvals:decide') });
    const task = await createTask(t, 'a human asks');
    const res = await t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: human.token });
    expect(res.status, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'pending', requested_by: { id: human.id, kind: 'human' } });
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(200);
  });
});

describe('a human with approvals:decide', () => {
  it('deleting runs at once: 200, no approval', async () => {
    const task = await createTask(t, 'deleted by a human');
    const res = await t.request('DELETE', `/api/v1/tasks/${task.id}`);
    expect(res.status, res.body).toBe(200);
    expect(res.json<{ deleted_at: string | null }>().deleted_at).not.toBeNull();
    expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}`), 404, 'not_found');
    expect(await approvalsFor(task.id)).toEqual([]);
    const deleted = (await eventsAbout(t, task.id)).filter((e) => e.type === 'task.deleted');
    expect(deleted.map((e) => e.actor)).toEqual([{ id: adminId, kind: 'human' }]);
  });
});

describe('approving', () => {
  it.each([
    ['two human admins', () => [t.adminToken, admin2.token]],
    ['one admin with two Idempotency-Keys', () => [t.adminToken, t.adminToken]],
  ])('concurrently (%s): exactly one 200, one 409 approval_not_pending; the task is deleted once, as the requester', async (_, tokens) => {
    const { task, approval } = await requestDeletion('approved twice at once');
    const responses = await Promise.all(
      tokens().map((token) => t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { token, key: randomUUID(), body: { reason: 'ok' } })),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses, responses.map((r) => r.body).join('\n')).toEqual([200, 409]);
    const loser = responses.find((r) => r.status === 409);
    if (loser) expectProblem(loser, 409, 'approval_not_pending');
    const winner = responses.find((r) => r.status === 200)?.json<Approval>();
    expect(winner).toMatchObject({ status: 'approved', result: { status: 200, body: { id: task.id } } });
    expect(winner?.result?.body.deleted_at).toBeTruthy();

    expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}`), 404, 'not_found');
    const read = await t.request('GET', `/api/v1/approvals/${approval.id}`);
    expect(read.json()).toMatchObject({ status: 'approved', decided_by: { kind: 'human' }, result: { status: 200, body: { id: task.id } } });
    // The requester sees the outcome too.
    expect((await t.request('GET', `/api/v1/approvals/${approval.id}`, { token: agent.token })).json()).toMatchObject({ status: 'approved' });

    const timeline = (await t.request('GET', `/api/v1/tasks/${task.id}/events?view=full`)).json<{ data: { type: string; actor: unknown; token_id: string | null }[] }>().data;
    const deleted = timeline.filter((e) => e.type === 'task.deleted');
    expect(deleted).toHaveLength(1);
    expect(deleted[0]).toMatchObject({ actor: { id: agent.id, kind: 'agent' }, token_id: agent.tokenId });
    const stored = await t.database.db.selectFrom('events').select(['type', 'approval_id']).where('subject', '=', task.id).where('type', '=', 'task.deleted').execute();
    expect(stored).toEqual([{ type: 'task.deleted', approval_id: approval.id }]);
    expect((await eventsAbout(t, approval.id)).map((e) => e.type)).toEqual(['approval.requested', 'approval.granted']);
  });

  it('again after it ran: 409 approval_not_pending, nothing runs twice', async () => {
    const { task, approval } = await requestDeletion('approved, then approved again');
    expect((await t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} })).status).toBe(200);
    expectProblem(await t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} }), 409, 'approval_not_pending');
    expectProblem(await t.request('POST', `/api/v1/approvals/${approval.id}/deny`, { body: {} }), 409, 'approval_not_pending');
    expect((await eventsAbout(t, task.id)).filter((e) => e.type === 'task.deleted')).toHaveLength(1);
  });

  it('after the task changed: 409 approval_stale, the task is not deleted, the approval stays pending', async () => {
    const { task, approval } = await requestDeletion('changed while waiting');
    const patch = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'changed meanwhile' } });
    expect(patch.status, patch.body).toBe(200);
    const problem = expectProblem(await t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} }), 409, 'approval_stale');
    expect(problem).toMatchObject({ target_id: task.id, requested_version: task.version, current_version: task.version + 1 });
    const read = await t.request('GET', `/api/v1/tasks/${task.id}?view=full`);
    expect(read.status).toBe(200);
    expect(read.json()).toMatchObject({ title: 'changed meanwhile', deleted_at: null });
    expect((await t.request('GET', `/api/v1/approvals/${approval.id}`)).json()).toMatchObject({ status: 'pending', result: null });
    expect((await eventsAbout(t, task.id)).map((e) => e.type)).not.toContain('task.deleted');
    expect((await eventsAbout(t, approval.id)).map((e) => e.type)).toEqual(['approval.requested']);
  });

  it('a second request for a task already deleted: 409 approval_stale', async () => {
    const { task, approval } = await requestDeletion('asked for twice');
    const second = await t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
    expect(second.status, second.body).toBe(202);
    expect((await t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} })).status).toBe(200);
    expectProblem(await t.request('POST', `/api/v1/approvals/${second.json<Approval>().id}/approve`, { body: {} }), 409, 'approval_stale');
    expect((await eventsAbout(t, task.id)).filter((e) => e.type === 'task.deleted')).toHaveLength(1);
  });
});

describe('denying', () => {
  it('never runs the operation: the task is untouched; only approval.requested and approval.denied are recorded', async () => {
    const { task, approval } = await requestDeletion('kept');
    const before = (await t.request('GET', `/api/v1/tasks/${task.id}?view=full`)).json<{ version: number; updated_at: string }>();
    const res = await t.request('POST', `/api/v1/approvals/${approval.id}/deny`, { body: { reason: 'still needed' } });
    expect(res.status, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'denied', reason: 'still needed', decided_by: { id: adminId, kind: 'human' }, result: null });
    const after = await t.request('GET', `/api/v1/tasks/${task.id}?view=full`);
    expect(after.status).toBe(200);
    expect(after.json()).toMatchObject({ version: before.version, updated_at: before.updated_at, deleted_at: null });
    expect((await eventsAbout(t, task.id)).map((e) => e.type)).toEqual(['task.created']);
    const decided = await eventsAbout(t, approval.id);
    expect(decided.map((e) => [e.type, e.actor])).toEqual([
      ['approval.requested', { id: agent.id, kind: 'agent' }],
      ['approval.denied', { id: adminId, kind: 'human' }],
    ]);
    const byApproval = await t.database.db.selectFrom('events').select('type').where('approval_id', '=', approval.id).orderBy('seq').execute();
    expect(byApproval.map((e) => e.type)).toEqual(['approval.requested', 'approval.denied']);
    expectProblem(await t.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} }), 409, 'approval_not_pending');
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(200);
  });
});
