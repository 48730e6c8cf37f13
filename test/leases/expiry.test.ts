import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal, Response } from '../harness.ts';
import { expectProblem, type TaskBody } from '../rest/fixtures.ts';
import {
  type Claim,
  claimTask,
  type Cluster,
  createTask,
  getTask,
  INSTANCES,
  type LeaseBody,
  leaseEvents,
  pollUntil,
  sleep,
  sleepPast,
  startInstances,
  taskEvents,
  WORKER_SCOPES,
} from './instances.ts';

const TTL = { defaultS: 2, minS: 1, maxS: 3600 };

describe(`the sweeper, with ${INSTANCES} instance(s) sweeping one database every 200 ms (PGlite is single-process: one)`, () => {
  let c: Cluster;
  let agent: Principal;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { leaseTtl: TTL, sweepIntervalMs: 200 });
    agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => c.close());

  /** Polls the task until the sweeper has put it back in todo. */
  const backInTodo = (id: string, boundMs: number) =>
    pollUntil(async () => {
      const task = await getTask(c, id);
      return task.status === 'todo' ? task : undefined;
    }, boundMs, `task ${id} back in todo`);

  it('a 2 s lease lapses, the task is todo again within 3 s, with one lease.expired by the system', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token);
    expect(lease).toMatchObject({ ttl_s: 2, epoch: 1, state: 'active' });

    const back = await backInTodo(task.id, 3_000);
    expect(back.lease).toBeNull();
    // Give every sweeper a few more passes: none may expire the lease a second time.
    await sleep(1_000);
    const events = await taskEvents(c, task.id);
    const expired = leaseEvents(events, 'lease.expired', lease.id);
    expect(expired).toHaveLength(1);
    expect(expired[0]?.actor).toEqual({ id: 'system', kind: 'system' });
    const returned = events.filter((e) => e.type === 'task.status_changed' && e.data.reason === 'lease_expired');
    expect(returned).toHaveLength(1);
    expect(returned[0]).toMatchObject({ actor: { kind: 'system' }, data: { from: 'in_progress', to: 'todo' } });
    expect(events.indexOf(expired[0]!)).toBeLessThan(events.indexOf(returned[0]!));

    const read = await c.request('GET', `/api/v1/leases/${lease.id}`, { token: agent.token });
    expect(read.json<LeaseBody>()).toMatchObject({ state: 'expired', ended_at: expect.any(String) as string });
    // Claimable again, by anyone, with the next fencing epoch.
    const other = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const again = await claimTask(c, task.id, other.token, { ttl_s: 600 });
    expect(again.lease.epoch).toBe(2);
  });

  it('20 leases lapsing together are each expired exactly once, however many instances sweep', { timeout: 90_000 }, async () => {
    const tasks = await Promise.all(Array.from({ length: 20 }, () => createTask(c)));
    const claims = await Promise.all(tasks.map((task, i) => c.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: { ttl_s: 1 }, via: i % INSTANCES })));
    const leases = claims.map((res) => {
      expect(res.status, res.body).toBe(200);
      return res.json<Claim>().lease;
    });
    for (const task of tasks) await backInTodo(task.id, 10_000);
    await sleep(1_000);
    for (const lease of leases) {
      const events = await taskEvents(c, lease.task_id);
      expect(leaseEvents(events, 'lease.expired', lease.id), lease.task_id).toHaveLength(1);
      expect(events.filter((e) => e.type === 'task.status_changed' && e.data.reason === 'lease_expired'), lease.task_id).toHaveLength(1);
    }
  });

  it('heartbeats every ~500 ms keep a 2 s lease alive for ~5 s', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token);
    let beats = 0;
    const until = Date.now() + 5_000;
    while (Date.now() < until) {
      // Read the task while waiting, so the heartbeat cadence stays near 500 ms.
      const [, now] = await Promise.all([sleep(500), getTask(c, task.id)]);
      expect(now.status).toBe('in_progress');
      expect(now.lease).toMatchObject({ id: lease.id, epoch: 1 });
      const res = await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: { note: `beat ${beats}` }, via: beats % INSTANCES });
      expect(res.status, res.body).toBe(200);
      expect(res.json<LeaseBody>()).toMatchObject({ id: lease.id, state: 'active', epoch: 1, ttl_s: 2 });
      beats++;
    }
    const now = await getTask(c, task.id);
    expect(now.status).toBe('in_progress');
    expect(now.lease).toMatchObject({ id: lease.id, epoch: 1 });
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.renewed', lease.id)).toHaveLength(beats);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(0);
    const released = await c.request('POST', `/api/v1/leases/${lease.id}/release`, { token: agent.token, body: {} });
    expect(released.status, released.body).toBe(200);
  });

  it('a heartbeat after expiry is 409 lease_expired, before and after the sweeper catches up', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token, { ttl_s: 1 });
    await sleepPast(lease.expires_at);
    expectProblem(await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: {} }), 409, 'lease_expired');
    await backInTodo(task.id, 10_000);
    expectProblem(await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: {} }), 409, 'lease_expired');
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.renewed', lease.id)).toHaveLength(0);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(1);
  });

  it('lease.expiring is emitted once per term: once before a heartbeat, once after', { timeout: 90_000 }, async () => {
    // A 10 s term warns at 8 s (80 %), leaving two seconds to answer the warning with a heartbeat;
    // the heartbeat starts a 5 s term, warned at 4 s, which then runs out.
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token, { ttl_s: 10 });
    const expiring = async () => leaseEvents(await taskEvents(c, task.id), 'lease.expiring', lease.id);

    const first = await pollUntil(async () => {
      const found = await expiring();
      return found.length > 0 ? found : undefined;
    }, 20_000, 'the first lease.expiring');
    const beat = await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: { note: 'still here', ttl_s: 5 } });
    expect(beat.status, beat.body).toBe(200);
    const renewed = beat.json<LeaseBody>();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ actor: { id: 'system', kind: 'system' }, data: { lease_id: lease.id, expires_at: lease.expires_at } });

    await backInTodo(task.id, 20_000);
    await sleep(1_000);
    const warnings = await expiring();
    expect(warnings.map((e) => e.data.expires_at)).toEqual([lease.expires_at, renewed.expires_at]);
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(1);
  });

  it('release racing expiry (1 s leases, 20 times) always leaves one outcome: todo, released XOR expired, one event', { timeout: 120_000 }, async () => {
    // Releases from 500 ms before to 450 ms after the expiry, in 50 ms steps, five at a time:
    // a loaded machine delays requests, so the window is wide enough to land on both sides.
    const outcomes: { task: TaskBody; lease: LeaseBody; res: Response }[] = [];
    for (let round = 0; round < 4; round++) {
      outcomes.push(
        ...(await Promise.all(
          Array.from({ length: 5 }, async (_, n) => {
            const i = round * 5 + n;
            const task = await createTask(c);
            const { lease } = await claimTask(c, task.id, agent.token, { ttl_s: 1 });
            await sleepPast(lease.expires_at, -500 + i * 50);
            const res = await c.request('POST', `/api/v1/leases/${lease.id}/release`, { token: agent.token, body: {}, via: i % INSTANCES });
            return { task, lease, res };
          }),
        )),
      );
    }
    for (const { task } of outcomes) await backInTodo(task.id, 10_000);
    await sleep(1_000);
    for (const { task, lease, res } of outcomes) {
      const read = await c.request('GET', `/api/v1/leases/${lease.id}`, { token: agent.token });
      const state = read.json<LeaseBody>().state;
      const events = await taskEvents(c, task.id);
      const released = leaseEvents(events, 'lease.released', lease.id);
      const expired = leaseEvents(events, 'lease.expired', lease.id);
      if (res.status === 200) {
        expect(state, task.id).toBe('released');
        expect([released.length, expired.length], task.id).toEqual([1, 0]);
      } else {
        expectProblem(res, 409, 'lease_expired');
        expect(state, task.id).toBe('expired');
        expect([released.length, expired.length], task.id).toEqual([0, 1]);
      }
      expect((await getTask(c, task.id)).status).toBe('todo');
      expect(events.filter((e) => e.type === 'task.status_changed' && e.data.to === 'todo'), task.id).toHaveLength(1);
    }
  });
});

describe('claims never wait for the sweeper (sweepIntervalMs: 0)', () => {
  let c: Cluster;
  let first: Principal;
  let second: Principal;
  beforeAll(async () => {
    c = await startInstances(1, { leaseTtl: TTL, sweepIntervalMs: 0 });
    first = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    second = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => c.close());

  /** Claims, lets the lease lapse with no sweeper, then checks it still sits in_progress, reading as expired. */
  async function lapsedClaim(body: Record<string, unknown> = {}): Promise<Claim> {
    const task = await createTask(c, body);
    const claim = await claimTask(c, task.id, first.token, { ttl_s: 1 });
    await sleepPast(claim.lease.expires_at);
    expect((await getTask(c, task.id)).status).toBe('in_progress');
    const read = await c.request('GET', `/api/v1/leases/${claim.lease.id}`, { token: first.token });
    expect(read.json<LeaseBody>().state).toBe('expired');
    return claim;
  }

  /** The timeline: the old lease expired (by the system, once), the task went back to todo, then the new claim. */
  async function expectTakenOver(old: Claim, fresh: Claim): Promise<void> {
    expect(fresh.lease).toMatchObject({ epoch: 2, holder: { id: second.id }, state: 'active' });
    const events = await taskEvents(c, old.task.id);
    const expired = leaseEvents(events, 'lease.expired', old.lease.id);
    expect(expired).toHaveLength(1);
    expect(expired[0]?.actor.kind).toBe('system');
    const returned = events.findIndex((e) => e.type === 'task.status_changed' && e.data.reason === 'lease_expired');
    expect(events[returned]?.actor.kind).toBe('system');
    const claimed = events.findIndex((e) => e.type === 'task.claimed' && e.data.lease_id === fresh.lease.id);
    expect(events[claimed]?.actor).toEqual({ id: second.id, kind: 'agent' });
    expect(events.indexOf(expired[0]!)).toBeLessThan(returned);
    expect(returned).toBeLessThan(claimed);
    const read = await c.request('GET', `/api/v1/leases/${old.lease.id}`, { token: first.token });
    expect(read.json<LeaseBody>()).toMatchObject({ state: 'expired' });
  }

  it('an expired lease is claimable at once by id', async () => {
    const old = await lapsedClaim();
    const res = await c.request('POST', `/api/v1/tasks/${old.task.id}/claim`, { token: second.token, body: {} });
    expect(res.status, res.body).toBe(200);
    await expectTakenOver(old, res.json<Claim>());
  });

  it('an expired lease is claimable at once through claim-next', async () => {
    const old = await lapsedClaim({ labels: ['lapsed-next'] });
    const res = await c.request('POST', '/api/v1/tasks/claim', { token: second.token, body: { labels: ['lapsed-next'] } });
    expect(res.status, res.body).toBe(200);
    const { claims } = res.json<{ claims: Claim[] }>();
    expect(claims.map((x) => x.task.id)).toEqual([old.task.id]);
    await expectTakenOver(old, claims[0]!);
  });
});
