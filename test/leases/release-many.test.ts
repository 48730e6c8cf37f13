import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type Claim, claimBatch as claimTasks, type Cluster, type EventBody, getTask, INSTANCES, type LeaseBody, pages, startInstances, WORKER_SCOPES } from './instances.ts';

let cluster: Cluster;
let agent: Principal;
let other: Principal;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { sweepIntervalMs: 0 });
  agent = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  other = await cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
});
afterAll(() => cluster.close());

/** `count` fresh tasks under their own label, claimed at once by `who`. */
const claimBatch = (who: Principal, count: number) => claimTasks(cluster, who.token, count, 'release-many');

const releaseMany = (token: string, ids: readonly string[], via = 0) => cluster.request('POST', '/api/v1/leases/release', { token, body: { ids }, via });
const eventsOf = (type: string) => pages<EventBody>(cluster, `/api/v1/events?types=${type}`);

describe('POST /api/v1/leases/release', () => {
  it('releases a claimed batch in one call: every task back to todo, two events per lease, the leases ended', async () => {
    const claims = await claimBatch(agent, 5);
    const ids = claims.map((c) => c.lease.id).reverse();
    const res = await cluster.request('POST', '/api/v1/leases/release', { token: agent.token, body: { ids, note: 'shutting down' } });
    expect(res.status, res.body).toBe(200);
    const { released } = res.json<{ released: { task: Claim['task']; lease: LeaseBody }[] }>();
    expect(released.map((r) => r.lease.id)).toEqual(ids);
    for (const { task, lease } of released) {
      expect(lease).toMatchObject({ state: 'released', ended_at: expect.any(String) as string });
      expect(task).toMatchObject({ id: lease.task_id, status: 'todo', lease: null });
      expect(await getTask(cluster, task.id, agent.token)).toMatchObject({ status: 'todo', lease: null, version: task.version });
      expect((await cluster.request('GET', `/api/v1/leases/${lease.id}`, { token: agent.token })).json()).toEqual(lease);
      const events = (await cluster.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: EventBody[] }>().data.map((e) => e.type);
      expect(events.filter((type) => type === 'lease.released' || type === 'task.status_changed')).toHaveLength(3);
    }
    const notes = (await eventsOf('lease.released')).filter((e) => ids.includes((e.data as { lease_id: string }).lease_id));
    expect(notes.map((e) => (e.data as { note?: string }).note)).toEqual(ids.map(() => 'shutting down'));
  });

  it('is all or none: one lease the caller may not release, or one already ended, leaves every lease held and writes nothing', async () => {
    const mine = await claimBatch(agent, 3);
    const theirs = await claimBatch(other, 1);
    const before = (await eventsOf('lease.released')).length;
    const foreign = await releaseMany(agent.token, [...mine.map((c) => c.lease.id), theirs[0]?.lease.id ?? '']);
    expect(foreign.status, foreign.body).toBe(403);
    expect(foreign.json()).toMatchObject({ code: 'not_lease_holder', detail: expect.stringContaining(theirs[0]?.lease.id ?? '') as string });

    const [first, ...rest] = mine.map((c) => c.lease.id);
    expect((await cluster.request('POST', `/api/v1/leases/${first}/release`, { token: agent.token, body: {} })).status).toBe(200);
    const ended = await releaseMany(agent.token, [...rest, first ?? '']);
    expect(ended.status, ended.body).toBe(409);
    expect(ended.json()).toMatchObject({ code: 'lease_inactive', detail: expect.stringContaining(first ?? '') as string });

    expect((await eventsOf('lease.released')).length).toBe(before + 1);
    for (const claim of [...mine.slice(1), ...theirs]) expect(await getTask(cluster, claim.task.id)).toMatchObject({ status: 'in_progress', lease: { id: claim.lease.id } });
  });

  it(`lets concurrent releases of overlapping batches (through ${INSTANCES} instance(s)) settle each lease exactly once, without deadlock`, async () => {
    const before = (await eventsOf('lease.released')).length;
    let released = 0;
    for (let round = 0; round < 5; round++) {
      const ids = (await claimBatch(agent, 8)).map((c) => c.lease.id);
      // The holder releases the first six while a human (who may release any lease) releases the last six.
      const [holder, human] = await Promise.all([releaseMany(agent.token, ids.slice(0, 6), 0), releaseMany(cluster.adminToken, ids.slice(2).reverse(), INSTANCES - 1)]);
      const statuses = [holder.status, human.status].sort();
      expect(statuses, `${holder.body}\n${human.body}`).toEqual([200, 409]);
      const winner = holder.status === 200 ? ids.slice(0, 6) : ids.slice(2);
      released += winner.length;
      for (const id of ids) {
        const lease = (await cluster.request('GET', `/api/v1/leases/${id}`)).json<LeaseBody>();
        expect(lease.state, id).toBe(winner.includes(id) ? 'released' : 'active');
      }
    }
    expect((await eventsOf('lease.released')).length).toBe(before + released);
  });

  it('refuses an empty list, a repeated lease and more than 100 leases with a problem', async () => {
    const [claim] = await claimBatch(agent, 1);
    const id = claim?.lease.id ?? '';
    for (const ids of [[], [id, id], Array.from({ length: 101 }, () => id)]) {
      const res = await releaseMany(agent.token, ids);
      expect(res.status, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/ids' }] });
    }
    expect(await getTask(cluster, claim?.task.id ?? '')).toMatchObject({ status: 'in_progress' });
  });
});
