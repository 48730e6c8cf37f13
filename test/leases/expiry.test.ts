import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { expectProblem, type TaskBody } from '../rest/fixtures.ts';
import {
  type Claim,
  claimTask,
  type Cluster,
  CRON_SECRET,
  createTask,
  getTask,
  INSTANCES,
  type LeaseBody,
  leaseEvents,
  startInstances,
  sweep,
  taskEvents,
  testClock,
  WORKER_SCOPES,
} from './instances.ts';

/*
 * Lease time is the servers' injected clock, moved by the test; sweeps run when the test asks
 * (`/cron/keepalive`, one pass of the same sweeper the loop runs). No test waits in real time.
 */

const TTL = { defaultS: 2, minS: 1, maxS: 3600 };

describe(`the sweeper, with ${INSTANCES} instance(s) sweeping one database (PGlite is single-process: one)`, () => {
  const clock = testClock();
  let c: Cluster;
  let agent: Principal;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { leaseTtl: TTL, sweepIntervalMs: 0, webhookIntervalMs: 0, cronSecret: CRON_SECRET }, clock);
    agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => c.close());

  /** Sweeps on every instance at once. */
  const sweepAll = () => Promise.all(Array.from({ length: INSTANCES }, (_, via) => sweep(c, via)));

  it('a 2 s lease lapses, a sweep puts the task back in todo, with one lease.expired by the system', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token);
    expect(lease).toMatchObject({ ttl_s: 2, epoch: 1, state: 'active' });

    clock.setPast(lease.expires_at, -1);
    await sweepAll();
    expect((await getTask(c, task.id)).status).toBe('in_progress');
    clock.setPast(lease.expires_at);
    await sweepAll();
    const back = await getTask(c, task.id);
    expect(back.status).toBe('todo');
    expect(back.lease).toBeNull();
    // More passes on every instance: none may expire the lease a second time.
    await sweepAll();
    await sweepAll();
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

  it('20 leases lapsing together are each expired exactly once, however many instances sweep at once', { timeout: 90_000 }, async () => {
    const tasks = await Promise.all(Array.from({ length: 20 }, () => createTask(c)));
    const claims = await Promise.all(tasks.map((task, i) => c.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: { ttl_s: 1 }, via: i % INSTANCES })));
    const leases = claims.map((res) => {
      expect(res.status, res.body).toBe(200);
      return res.json<Claim>().lease;
    });
    clock.setPast(leases.map((l) => l.expires_at).sort().at(-1) ?? '');
    await Promise.all([sweepAll(), sweepAll()]);
    await sweepAll();
    for (const lease of leases) {
      expect((await getTask(c, lease.task_id)).status).toBe('todo');
      const events = await taskEvents(c, lease.task_id);
      expect(leaseEvents(events, 'lease.expired', lease.id), lease.task_id).toHaveLength(1);
      expect(events.filter((e) => e.type === 'task.status_changed' && e.data.reason === 'lease_expired'), lease.task_id).toHaveLength(1);
    }
  });

  it('heartbeats every 500 ms keep a 2 s lease alive for 5 s of sweeps', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token);
    let beats = 0;
    for (let elapsed = 0; elapsed < 5_000; elapsed += 500) {
      clock.advance(500);
      await sweepAll();
      const now = await getTask(c, task.id);
      expect(now.status).toBe('in_progress');
      expect(now.lease).toMatchObject({ id: lease.id, epoch: 1 });
      const res = await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: { note: `beat ${beats}` }, via: beats % INSTANCES });
      expect(res.status, res.body).toBe(200);
      expect(res.json<LeaseBody>()).toMatchObject({ id: lease.id, state: 'active', epoch: 1, ttl_s: 2 });
      beats++;
    }
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.renewed', lease.id)).toHaveLength(beats);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(0);
    const released = await c.request('POST', `/api/v1/leases/${lease.id}/release`, { token: agent.token, body: {} });
    expect(released.status, released.body).toBe(200);
  });

  it('a heartbeat after expiry is 409 lease_expired, before and after the sweeper catches up', async () => {
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token, { ttl_s: 1 });
    clock.setPast(lease.expires_at);
    expectProblem(await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: {} }), 409, 'lease_expired');
    await sweepAll();
    expect((await getTask(c, task.id)).status).toBe('todo');
    expectProblem(await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: {} }), 409, 'lease_expired');
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.renewed', lease.id)).toHaveLength(0);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(1);
  });

  it('lease.expiring is emitted once per term: once before a heartbeat, once after', async () => {
    // A 10 s term warns at 8 s (80 %); the heartbeat starts a 5 s term, warned at 4 s, which then runs out.
    const task = await createTask(c);
    const { lease } = await claimTask(c, task.id, agent.token, { ttl_s: 10 });
    const expiring = async () => leaseEvents(await taskEvents(c, task.id), 'lease.expiring', lease.id);

    clock.advance(7_900);
    await sweepAll();
    expect(await expiring()).toHaveLength(0);
    clock.advance(200);
    await sweepAll();
    await sweepAll();
    const first = await expiring();
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ actor: { id: 'system', kind: 'system' }, data: { lease_id: lease.id, expires_at: lease.expires_at } });
    const beat = await c.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: agent.token, body: { note: 'still here', ttl_s: 5 } });
    expect(beat.status, beat.body).toBe(200);
    const renewed = beat.json<LeaseBody>();

    clock.setPast(renewed.expires_at, -900);
    await sweepAll();
    await sweepAll();
    clock.setPast(renewed.expires_at);
    await sweepAll();
    expect((await getTask(c, task.id)).status).toBe('todo');
    const warnings = await expiring();
    expect(warnings.map((e) => e.data.expires_at)).toEqual([lease.expires_at, renewed.expires_at]);
    const events = await taskEvents(c, task.id);
    expect(leaseEvents(events, 'lease.expired', lease.id)).toHaveLength(1);
  });

  it('release racing a sweep leaves one outcome: released before the expiry, expired after it, one event either way', { timeout: 120_000 }, async () => {
    const outcomes: { task: TaskBody; lease: LeaseBody; expired: boolean; status: number }[] = [];
    for (const offset of [-1, 0, 1, 500]) {
      const claimed = await Promise.all(
        Array.from({ length: 5 }, async () => {
          const task = await createTask(c);
          return { task, lease: (await claimTask(c, task.id, agent.token, { ttl_s: 1 })).lease };
        }),
      );
      clock.setPast(claimed.map((x) => x.lease.expires_at).sort()[0] ?? '', offset);
      const now = clock.now().getTime();
      // Each release goes out together with a sweep on every instance.
      const [released] = await Promise.all([
        Promise.all(claimed.map(({ lease }, i) => c.request('POST', `/api/v1/leases/${lease.id}/release`, { token: agent.token, body: {}, via: i % INSTANCES }))),
        sweepAll(),
      ]);
      claimed.forEach(({ task, lease }, i) => outcomes.push({ task, lease, expired: Date.parse(lease.expires_at) <= now, status: released[i]?.status ?? 0 }));
    }
    await sweepAll();
    for (const { task, lease, expired, status } of outcomes) {
      const read = await c.request('GET', `/api/v1/leases/${lease.id}`, { token: agent.token });
      const events = await taskEvents(c, task.id);
      const released = leaseEvents(events, 'lease.released', lease.id);
      const expiredEvents = leaseEvents(events, 'lease.expired', lease.id);
      expect(status, task.id).toBe(expired ? 409 : 200);
      expect(read.json<LeaseBody>().state, task.id).toBe(expired ? 'expired' : 'released');
      expect([released.length, expiredEvents.length], task.id).toEqual(expired ? [0, 1] : [1, 0]);
      expect((await getTask(c, task.id)).status).toBe('todo');
      expect(events.filter((e) => e.type === 'task.status_changed' && e.data.to === 'todo'), task.id).toHaveLength(1);
    }
  });
});

describe('claims never wait for the sweeper (sweepIntervalMs: 0; no back-off, so a counted lapse is claimable at once)', () => {
  const clock = testClock();
  let c: Cluster;
  let first: Principal;
  let second: Principal;
  beforeAll(async () => {
    c = await startInstances(1, { leaseTtl: TTL, sweepIntervalMs: 0 }, clock);
    first = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    second = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => c.close());

  /** Claims, lets the lease lapse with no sweeper, then checks it still sits in_progress, reading as expired. */
  async function lapsedClaim(body: Record<string, unknown> = {}): Promise<Claim> {
    const task = await createTask(c, body);
    const claim = await claimTask(c, task.id, first.token, { ttl_s: 1 });
    clock.setPast(claim.lease.expires_at);
    expect((await getTask(c, task.id)).status).toBe('in_progress');
    const read = await c.request('GET', `/api/v1/leases/${claim.lease.id}`, { token: first.token });
    expect(read.json<LeaseBody>().state).toBe('expired');
    return claim;
  }

  /**
   * The timeline: the old lease expired (by the system, once) and counted as a failed attempt (with
   * no back-off, as these suites configure), the task went back to todo, then the new claim.
   */
  async function expectTakenOver(old: Claim, fresh: Claim): Promise<void> {
    expect(fresh.lease).toMatchObject({ epoch: 2, holder: { id: second.id }, state: 'active' });
    const events = await taskEvents(c, old.task.id);
    const expired = leaseEvents(events, 'lease.expired', old.lease.id);
    expect(expired).toHaveLength(1);
    expect(expired[0]?.actor.kind).toBe('system');
    const counted = leaseEvents(events, 'task.attempt_failed', old.lease.id);
    expect(counted).toMatchObject([{ actor: { kind: 'system' }, data: { attempt: 1, kind: 'expired' } }]);
    const returned = events.findIndex((e) => e.type === 'task.status_changed' && e.data.reason === 'lease_expired');
    expect(events[returned]?.actor.kind).toBe('system');
    expect(events.indexOf(counted[0]!)).toBeLessThan(returned);
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
