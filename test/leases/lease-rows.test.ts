import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { type Claim, claimTask, createTask, getTask, type LeaseBody, WORKER_SCOPES } from './instances.ts';

// A claim writes its leases and a release, hand-in or delete ends one inside the task's own
// update, and each answers with the lease it wrote without reading it back. These tests read the
// lease back through its own route and require the two to agree field for field.

let t: TestServer;
let agent: Principal;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  agent = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
});
afterAll(() => t.close());

async function readLease(id: string): Promise<LeaseBody> {
  const res = await t.request('GET', `/api/v1/leases/${id}`, { token: agent.token });
  expect(res.status, res.body).toBe(200);
  return res.json<LeaseBody>();
}

describe('the lease a write answers with is the row the database holds', () => {
  it('claim-next of several: each lease, and each task pointing at it', async () => {
    const label = 'lease-rows-batch';
    for (let i = 0; i < 3; i++) await createTask(t, { labels: [label] });
    const res = await t.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: { limit: 3, labels: [label], ttl_s: 120 } });
    expect(res.status, res.body).toBe(200);
    const { claims } = res.json<{ claims: Claim[] }>();
    expect(claims).toHaveLength(3);
    for (const claim of claims) {
      expect(claim.lease).toMatchObject({ task_id: claim.task.id, state: 'active', ttl_s: 120, epoch: 1, holder: { id: agent.id, kind: 'agent' } });
      expect(await readLease(claim.lease.id)).toEqual(claim.lease);
      const task = await getTask(t, claim.task.id, agent.token);
      expect(task).toMatchObject({ status: 'in_progress', lease: { id: claim.lease.id, epoch: 1, expires_at: claim.lease.expires_at } });
    }
  });

  it('release: the ended lease it answers with is the stored one, and the task no longer points at it', async () => {
    const task = await createTask(t);
    const claim = await claimTask(t, task.id, agent.token);
    const res = await t.request('POST', `/api/v1/leases/${claim.lease.id}/release`, { token: agent.token, body: {} });
    expect(res.status, res.body).toBe(200);
    const released = res.json<{ task: Claim['task']; lease: LeaseBody }>();
    expect(released.lease).toMatchObject({ state: 'released', ended_at: expect.any(String) as string });
    expect(await readLease(claim.lease.id)).toEqual(released.lease);
    expect(await getTask(t, task.id, agent.token)).toMatchObject({ status: 'todo', lease: null });
  });

  it('a hand-in to in_review ends the lease at the time of the task update', async () => {
    const task = await createTask(t);
    const claim = await claimTask(t, task.id, agent.token);
    const res = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { token: agent.token, body: { status: 'in_review', lease_epoch: claim.lease.epoch } });
    expect(res.status, res.body).toBe(200);
    const reviewed = await getTask(t, task.id, agent.token);
    expect(reviewed).toMatchObject({ status: 'in_review', lease: null });
    expect(await readLease(claim.lease.id)).toMatchObject({ state: 'ended', ended_at: (reviewed as unknown as { updated_at: string }).updated_at });
  });

  it('deleting a claimed task ends its lease', async () => {
    const task = await createTask(t);
    const claim = await claimTask(t, task.id, agent.token);
    // The admin deletes (agents' deletes wait for a human's approval).
    const res = await t.request('DELETE', `/api/v1/tasks/${task.id}`, {});
    expect(res.status, res.body).toBe(200);
    expect(await readLease(claim.lease.id)).toMatchObject({ state: 'ended', ended_at: expect.any(String) as string });
  });
});
