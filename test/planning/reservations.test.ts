import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type Cluster, createTask, claimTask, INSTANCES, pages, startInstances, testClock, WORKER_SCOPES } from '../leases/instances.ts';

/**
 * Reservations (issue 42 §1), through REST over real HTTP, with the servers' clock moved by the
 * test: conflicts say who holds what until when, lapsed reservations are reclaimed, stale epochs
 * are refused, and on PostgreSQL two instances race 32 requesters for overlapping paths.
 */
interface Reservation {
  id: string;
  resource: string | null;
  repo: string | null;
  paths: string[] | null;
  mode: 'exclusive' | 'shared';
  holder: { id: string; kind: string };
  epoch: number;
  state: string;
  expires_at: string;
}
interface Conflict {
  code: string;
  detail: string;
  hint: string;
  holders: { reservation_id: string; holder: { id: string; kind: string }; mode: string; resource?: string; repo?: string; overlapping?: { yours: string; theirs: string }[]; expires_at: string }[];
}

describe('reservations', () => {
  const clock = testClock();
  let c: Cluster;
  let a: Principal;
  let b: Principal;
  let d: Principal;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { sweepIntervalMs: 0, webhookIntervalMs: 0 }, clock);
    const agent = () => c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    [a, b, d] = await Promise.all([agent(), agent(), agent()]);
  });
  afterAll(() => c.close());

  const acquire = (who: Principal, body: Record<string, unknown>, via = 0) => c.request('POST', '/api/v1/reservations', { token: who.token, body, via });
  const held = async (who: Principal, body: Record<string, unknown>) => {
    const res = await acquire(who, body);
    expect(res.status, res.body).toBe(201);
    return res.json<Reservation>();
  };
  const refused = async (who: Principal, body: Record<string, unknown>) => {
    const res = await acquire(who, body);
    expect(res.status, res.body).toBe(409);
    return res.json<Conflict>();
  };
  const release = (who: Principal, r: Pick<Reservation, 'id'>, epoch?: number) => c.request('POST', `/api/v1/reservations/${r.id}/release`, { token: who.token, body: epoch === undefined ? {} : { epoch } });

  it('a conflict names the holder, the overlapping globs and until when; paths apart do not conflict', async () => {
    const repo = 'github.com/acme/api';
    const mine = await held(a, { repo, paths: ['src/**'], ttl_s: 600 });
    expect(mine).toMatchObject({ repo, paths: ['src/**'], mode: 'exclusive', holder: { id: a.id, kind: 'agent' }, state: 'active', epoch: 1 });
    const conflict = await refused(b, { repo, paths: ['docs/**', 'src/a.ts'] });
    expect(conflict.code).toBe('reservation_conflict');
    expect(conflict.detail).toBe(`Paths in ${repo} are reserved (exclusive) by agent ${a.id} until ${mine.expires_at}.`);
    expect(conflict.holders).toEqual([
      { reservation_id: mine.id, holder: { id: a.id, kind: 'agent' }, mode: 'exclusive', repo, overlapping: [{ yours: 'src/a.ts', theirs: 'src/**' }], task_id: null, expires_at: mine.expires_at },
    ]);
    await held(b, { repo, paths: ['docs/**', 'README.md'] });
    await held(b, { repo: 'github.com/acme/web', paths: ['src/**'] });
    expect((await refused(d, { repo, paths: ['**/*.md'] })).holders.map((h) => [h.holder.id, h.overlapping])).toEqual([
      [a.id, [{ yours: '**/*.md', theirs: 'src/**' }]],
      [b.id, [{ yours: '**/*.md', theirs: 'docs/**' }, { yours: '**/*.md', theirs: 'README.md' }]],
    ]);
  });

  it('shared holders coexist; an exclusive request waits for all of them, and excludes shared ones', async () => {
    const first = await held(a, { resource: 'staging-db', mode: 'shared' });
    const second = await held(b, { resource: 'staging-db', mode: 'shared' });
    const conflict = await refused(d, { resource: 'staging-db' });
    expect(conflict.detail).toMatch(/^Resource staging-db is reserved \(shared\) by agent /);
    expect(conflict.holders.map((h) => [h.holder.id, h.mode, h.resource])).toEqual([
      [a.id, 'shared', 'staging-db'],
      [b.id, 'shared', 'staging-db'],
    ]);
    expect((await release(a, first)).status).toBe(200);
    expect((await release(b, second, second.epoch)).status).toBe(200);
    const sole = await held(d, { resource: 'staging-db' });
    expect(sole.epoch).toBe(3);
    await refused(a, { resource: 'staging-db', mode: 'shared' });
  });

  it('a lapsed reservation is reclaimed; its stale holder can neither renew nor release it', async () => {
    const old = await held(a, { resource: 'build', ttl_s: 60 });
    clock.advance(50_000);
    const renewed = await c.request('POST', `/api/v1/reservations/${old.id}/heartbeat`, { token: a.token, body: { epoch: old.epoch } });
    expect(renewed.status, renewed.body).toBe(200);
    expect(Date.parse(renewed.json<Reservation>().expires_at)).toBe(clock.now().getTime() + 60_000);
    clock.advance(50_000);
    await refused(b, { resource: 'build' });
    clock.advance(11_000);
    const fresh = await held(b, { resource: 'build' });
    expect(fresh.epoch).toBe(old.epoch + 1);
    for (const path of ['release', 'heartbeat']) {
      const stale = await c.request('POST', `/api/v1/reservations/${old.id}/${path}`, { token: a.token, body: { epoch: old.epoch } });
      expect(stale.status, stale.body).toBe(409);
      expect(stale.json<{ code: string; state: string }>()).toMatchObject({ code: 'reservation_lapsed', state: 'expired' });
    }
    expect((await c.request('GET', `/api/v1/reservations/${fresh.id}`)).json<Reservation>().state).toBe('active');
    const events = await pages<{ type: string; subject: string; data: { reason?: string } }>(c, '/api/v1/events?types=reservation.acquired,reservation.expired');
    expect(events.filter((e) => e.subject === old.id).map((e) => [e.type, e.data.reason])).toEqual([
      ['reservation.acquired', undefined],
      ['reservation.expired', 'expired'],
    ]);
  });

  it('a wrong epoch, or someone else, is refused; a human may release anyone\'s', async () => {
    const mine = await held(a, { resource: 'deploy-lock' });
    expect((await release(a, mine, mine.epoch + 1)).json<{ code: string }>().code).toBe('reservation_lapsed');
    const other = await release(b, mine);
    expect(other.status).toBe(403);
    expect(other.json<{ code: string }>().code).toBe('not_reservation_holder');
    const human = await c.request('POST', `/api/v1/reservations/${mine.id}/release`, { body: {} });
    expect(human.status, human.body).toBe(200);
    expect(human.json<Reservation>().state).toBe('released');
  });

  it('a reservation taken for a task ends with the lease on it', async () => {
    const task = await createTask(c, { title: 'Migrate the API' });
    const claim = await claimTask(c, task.id, a.token);
    const tied = await held(a, { repo: 'github.com/acme/tied', paths: ['api/**'], task_id: task.id });
    expect((await acquire(b, { resource: 'x', task_id: task.id })).json<{ code: string }>().code).toBe('lease_inactive');
    await refused(b, { repo: 'github.com/acme/tied', paths: ['api/v1.ts'] });
    // The task page lists what is held for the task (reservations_list with task_id), nothing else.
    await held(a, { resource: 'untied-lock' });
    const forTask = (await c.request('GET', `/api/v1/reservations?task_id=${task.id}`)).json<{ data: Reservation[] }>().data;
    expect(forTask.map((r) => r.id)).toEqual([tied.id]);
    const gave = await c.request('POST', `/api/v1/leases/${claim.lease.id}/release`, { token: a.token, body: {} });
    expect(gave.status, gave.body).toBe(200);
    expect((await c.request('GET', `/api/v1/reservations/${tied.id}`)).json<Reservation>().state).toBe('lease_ended');
    expect((await c.request('GET', `/api/v1/reservations?task_id=${task.id}`)).json<{ data: Reservation[] }>().data).toEqual([]);
    await held(b, { repo: 'github.com/acme/tied', paths: ['api/v1.ts'] });
  });

  it(`32 requesters over ${INSTANCES} instance(s) asking for overlapping paths: exactly one holds them`, async () => {
    const repo = 'github.com/acme/race';
    const globs = [['src/**'], ['src/a.ts'], ['src/*.ts'], ['**/a.ts'], ['src/**/*.ts']];
    const racers = await Promise.all(Array.from({ length: 32 }, () => c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));
    const answers = await Promise.all(racers.map((who, i) => acquire(who, { repo, paths: globs[i % globs.length] }, i % INSTANCES)));
    expect(answers.map((res) => res.status).sort()).toEqual([201, ...Array<number>(31).fill(409)]);
    const winner = answers.find((res) => res.status === 201)?.json<Reservation>();
    const active = await pages<Reservation>(c, `/api/v1/reservations?repo=${encodeURIComponent(repo)}`);
    expect(active.map((r) => r.holder.id)).toEqual([winner?.holder.id]);
    for (const res of answers.filter((r) => r.status === 409)) expect(res.json<Conflict>().holders.map((h) => h.reservation_id)).toEqual([winner?.id]);
  });
});
