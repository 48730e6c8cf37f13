import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/domain/scopes.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, expectProblem, expectRefusedWithoutWrites, principalWithToken, whoami } from './helpers.ts';

/** Object-level authorization: what a principal may reach beyond its scopes. Token lifecycle: tokens.test.ts. */

let t: TestServer;
/** Two agents with the same, generous scopes (agents:admin included): only object-level rules keep them apart. */
let alice: { id: string; token: string; tokenId: string };
let bob: { id: string; token: string; tokenId: string };
const AGENT_SCOPES: Scope[] = ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read', 'agents:admin'];
const UNKNOWN_AGENT = 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV';
/** For writes refused inside the operation: the refusal itself is stored under the Idempotency-Key, nothing else. */
const REMEMBERED = { keyRemembered: true } as const;

beforeAll(async () => {
  t = await startTestServer();
  alice = await principalWithToken(t, { name: 'alice', scopes: AGENT_SCOPES }, 'alice-laptop');
  bob = await principalWithToken(t, { name: 'bob', scopes: AGENT_SCOPES }, 'bob-laptop');
});
afterAll(() => t.close());

describe('agents reach only their own principal and tokens', () => {
  it('reads its own record; another agent is answered 404 like an unknown id', async () => {
    expect((await t.request('GET', `/api/v1/agents/${alice.id}`, { token: alice.token })).status).toBe(200);
    const other = expectProblem(await t.request('GET', `/api/v1/agents/${bob.id}`, { token: alice.token }), 404, 'not_found');
    const unknown = expectProblem(await t.request('GET', `/api/v1/agents/${UNKNOWN_AGENT}`, { token: alice.token }), 404, 'not_found');
    expect(other.title).toBe(unknown.title);
    const list = await t.request('GET', '/api/v1/agents', { token: alice.token });
    expect(list.json<{ data: { id: string }[] }>().data.map((a) => a.id)).toEqual([alice.id]);
  });

  it("cannot list another agent's tokens: 404", async () => {
    expect((await t.request('GET', `/api/v1/agents/${alice.id}/tokens`, { token: alice.token })).status).toBe(200);
    await expectRefusedWithoutWrites(t, () => t.request('GET', `/api/v1/agents/${bob.id}/tokens`, { token: alice.token }), 404, 'not_found');
  });

  it("cannot revoke another agent's token: 404, and that token keeps working", async () => {
    await expectRefusedWithoutWrites(t, () => t.request('DELETE', `/api/v1/tokens/${bob.tokenId}`, { token: alice.token }), 404, 'not_found', REMEMBERED);
    expect((await whoami(t, bob.token)).principal.id).toBe(bob.id);
  });

  it("cannot issue a token for another agent: 404", async () => {
    await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', `/api/v1/agents/${bob.id}/tokens`, { token: alice.token, body: { machine: 'stolen' } }),
      404,
      'not_found',
      REMEMBERED,
    );
  });
});

describe('only humans create or change principals', () => {
  it('refuses an agent with agents:admin: 403 human_required, for itself and for others', async () => {
    await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', '/api/v1/agents', { token: alice.token, body: { name: 'minion', scopes: ['tasks:read'] } }),
      403,
      'human_required',
      REMEMBERED,
    );
    for (const id of [alice.id, bob.id]) {
      await expectRefusedWithoutWrites(
        t,
        () => t.request('PATCH', `/api/v1/agents/${id}`, { token: alice.token, body: { scopes: [...SCOPES] } }),
        403,
        'human_required',
        REMEMBERED,
      );
    }
  });

  it('lets a human with agents:admin do it, and refuses one without it: 403 forbidden_scope', async () => {
    const admin = await principalWithToken(t, { name: 'second admin', kind: 'human', scopes: ['agents:admin', 'tasks:read'] });
    const reader = await principalWithToken(t, { name: 'reader', kind: 'human', scopes: ['tasks:read'] });
    const made = await t.request('POST', '/api/v1/agents', { token: admin.token, body: { name: 'made by a human', scopes: ['tasks:read'] } });
    expect(made.status, made.body).toBe(201);
    const problem = await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', '/api/v1/agents', { token: reader.token, body: { name: 'nope', scopes: ['tasks:read'] } }),
      403,
      'forbidden_scope',
    );
    expect(problem.required_scope).toBe('agents:admin');
  });
});

describe("agents reach only their own leases", () => {
  let lease: { id: string; expires_at: string; renewed_at: string; state: string };
  beforeAll(async () => {
    const task = await createTask(t, 'held by bob');
    const claim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: bob.token, body: {} });
    expect(claim.status, claim.body).toBe(200);
    lease = claim.json<{ lease: typeof lease }>().lease;
  });

  it("does not show another agent's lease: 404", async () => {
    await expectRefusedWithoutWrites(t, () => t.request('GET', `/api/v1/leases/${lease.id}`, { token: alice.token }), 404, 'not_found');
    expect((await t.request('GET', `/api/v1/leases/${lease.id}`, { token: bob.token })).status).toBe(200);
    expect((await t.request('GET', `/api/v1/leases/${lease.id}`)).status).toBe(200);
  });

  it("cannot heartbeat or release another agent's lease: 403 not_lease_holder, and the lease is untouched", async () => {
    await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: alice.token, body: {} }),
      403,
      'not_lease_holder',
      REMEMBERED,
    );
    await expectRefusedWithoutWrites(t, () => t.request('POST', `/api/v1/leases/${lease.id}/release`, { token: alice.token, body: {} }), 403, 'not_lease_holder', REMEMBERED);
    const read = await t.request('GET', `/api/v1/leases/${lease.id}`, { token: bob.token });
    expect(read.json()).toMatchObject({ state: 'active', expires_at: lease.expires_at, renewed_at: lease.renewed_at });
  });

  it('lists only its own leases; asking for another holder is 403 not_lease_holder', async () => {
    await expectRefusedWithoutWrites(t, () => t.request('GET', `/api/v1/leases?holder=${bob.id}`, { token: alice.token }), 403, 'not_lease_holder');
    for (const query of ['', '?holder=me', '?state=active', `?holder=${alice.id}`]) {
      const res = await t.request('GET', `/api/v1/leases${query}`, { token: alice.token });
      expect(res.status, res.body).toBe(200);
      expect(res.json<{ data: { id: string }[] }>().data.map((l) => l.id)).not.toContain(lease.id);
    }
    const human = await t.request('GET', `/api/v1/leases?holder=${bob.id}`);
    expect(human.json<{ data: { id: string }[] }>().data.map((l) => l.id)).toContain(lease.id);
  });
});

describe('approvals are seen by their requester and decided by humans with approvals:decide', () => {
  let approvalId: string;
  let taskId: string;
  beforeAll(async () => {
    taskId = (await createTask(t, 'alice wants it gone')).id;
    const res = await t.request('DELETE', `/api/v1/tasks/${taskId}`, { token: alice.token });
    expect(res.status, res.body).toBe(202);
    approvalId = res.json<{ id: string }>().id;
    expect(res.headers.location).toBe(`/api/v1/approvals/${approvalId}`);
  });

  const expectStillPending = async () => {
    const res = await t.request('GET', `/api/v1/approvals/${approvalId}`);
    expect(res.json()).toMatchObject({ status: 'pending', decided_by: null, result: null });
    expect((await t.request('GET', `/api/v1/tasks/${taskId}`)).status).toBe(200);
  };

  it("hides an agent's approval from other agents: 404, and not in their list", async () => {
    expect((await t.request('GET', `/api/v1/approvals/${approvalId}`, { token: alice.token })).status).toBe(200);
    await expectRefusedWithoutWrites(t, () => t.request('GET', `/api/v1/approvals/${approvalId}`, { token: bob.token }), 404, 'not_found');
    const list = await t.request('GET', '/api/v1/approvals', { token: bob.token });
    expect(list.json<{ data: { id: string }[] }>().data.map((a) => a.id)).not.toContain(approvalId);
    const own = await t.request('GET', '/api/v1/approvals', { token: alice.token });
    expect(own.json<{ data: { id: string }[] }>().data.map((a) => a.id)).toContain(approvalId);
  });

  it('never lets an agent decide, not even its own request and not even with approvals:decide: 403 human_required', async () => {
    const carol = await principalWithToken(t, { name: 'carol', scopes: ['tasks:read', 'tasks:write', 'approvals:decide'] });
    const own = await t.request('DELETE', `/api/v1/tasks/${(await createTask(t, 'carol wants it gone')).id}`, { token: carol.token });
    expect(own.status, own.body).toBe(202);
    const ownId = own.json<{ id: string }>().id;
    for (const id of [ownId, approvalId]) {
      for (const verb of ['approve', 'deny']) {
        await expectRefusedWithoutWrites(t, () => t.request('POST', `/api/v1/approvals/${id}/${verb}`, { token: carol.token, body: {} }), 403, 'human_required', REMEMBERED);
      }
    }
    // Without the scope, the scope is what refuses.
    const problem = await expectRefusedWithoutWrites(
      t,
      () => t.request('POST', `/api/v1/approvals/${approvalId}/approve`, { token: alice.token, body: {} }),
      403,
      'forbidden_scope',
    );
    expect(problem.required_scope).toBe('approvals:decide');
    await expectStillPending();
  });

  it('refuses a human without approvals:decide: 403 forbidden_scope', async () => {
    const dave = await principalWithToken(t, { name: 'dave', kind: 'human', scopes: SCOPES.filter((s) => s !== 'approvals:decide') });
    for (const verb of ['approve', 'deny']) {
      const problem = await expectRefusedWithoutWrites(
        t,
        () => t.request('POST', `/api/v1/approvals/${approvalId}/${verb}`, { token: dave.token, body: {} }),
        403,
        'forbidden_scope',
      );
      expect(problem.required_scope).toBe('approvals:decide');
    }
    await expectStillPending();
  });
});
