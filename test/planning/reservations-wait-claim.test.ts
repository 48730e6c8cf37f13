import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type Cluster, type Claim, createTask, claimTask, INSTANCES, pages, startInstances, taskEvents, testClock, WORKER_SCOPES } from '../leases/instances.ts';

/**
 * Reservations, continued (issue 42 §1): a request that waits (`wait_s`) is granted once the holder
 * releases or lapses, on any instance; a task that requires reservations is claimed with them or not
 * at all, by tasks_claim and tasks_claim_next alike, over two instances on PostgreSQL.
 */
interface Reservation {
  id: string;
  repo: string | null;
  paths: string[] | null;
  holder: { id: string; kind: string };
  task_id: string | null;
  epoch: number;
  state: string;
  expires_at: string;
}
interface Problem {
  code: string;
  detail: string;
  holders: { reservation_id: string; holder: { id: string; kind: string }; task_id: string | null; expires_at: string }[];
}

describe('reservations: waiting, and tasks that require them', () => {
  const clock = testClock();
  let c: Cluster;
  let a: Principal;
  let b: Principal;
  const last = INSTANCES - 1;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { sweepIntervalMs: 0, webhookIntervalMs: 0 }, clock);
    const agent = () => c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    [a, b] = await Promise.all([agent(), agent()]);
  });
  afterAll(() => c.close());

  const acquire = (who: Principal, body: Record<string, unknown>, via = 0) => c.request('POST', '/api/v1/reservations', { token: who.token, body, via });
  const held = async (who: Principal, body: Record<string, unknown>, via = 0) => {
    const res = await acquire(who, body, via);
    expect(res.status, res.body).toBe(201);
    return res.json<Reservation>();
  };
  /** Resolves with the answer; `settled` says whether it came yet. */
  const pending = (answer: Promise<{ status: number; body: string }>) => {
    const state = { settled: false };
    const done = answer.then((res) => {
      state.settled = true;
      return res;
    });
    return { state, done };
  };

  it('a waiting request is granted as soon as the holder releases, on another instance', async () => {
    const mine = await held(a, { resource: 'migrator' }, last);
    const waiter = pending(acquire(b, { resource: 'migrator', wait_s: 60 }, 0));
    // A refusal answered after the waiter was sent: the resource is still held, so the waiter cannot have been granted.
    expect((await acquire(b, { resource: 'migrator' }, last)).status).toBe(409);
    expect(waiter.state.settled).toBe(false);
    const released = await c.request('POST', `/api/v1/reservations/${mine.id}/release`, { token: a.token, body: { epoch: mine.epoch }, via: last });
    expect(released.status, released.body).toBe(200);
    const granted = await waiter.done;
    expect(granted.status, granted.body).toBe(201);
    expect(JSON.parse(granted.body)).toMatchObject({ resource: 'migrator', holder: { id: b.id }, epoch: mine.epoch + 1, state: 'active' });
  });

  it('a waiting request is granted once the holder lapses; a bounded wait that ends held is still refused', async () => {
    const mine = await held(a, { resource: 'build-cache', ttl_s: 60 });
    const short = await acquire(b, { resource: 'build-cache', wait_s: 1 }, last);
    expect(short.status, short.body).toBe(409);
    expect(short.json<Problem>().holders.map((h) => h.reservation_id)).toEqual([mine.id]);
    const waiter = pending(acquire(b, { resource: 'build-cache', wait_s: 60 }, last));
    expect((await acquire(b, { resource: 'build-cache' })).status).toBe(409);
    expect(waiter.state.settled).toBe(false);
    clock.advance(61_000);
    const granted = await waiter.done;
    expect(granted.status, granted.body).toBe(201);
    expect(JSON.parse(granted.body)).toMatchObject({ holder: { id: b.id }, epoch: mine.epoch + 1 });
  });

  it('a task requiring src/** is claimed with its reservation by one agent; the other is told who holds it, and claim_next moves on', async () => {
    const repo = 'github.com/acme/claims';
    const label = 'needs-src';
    const first = await createTask(c, { title: 'Refactor src', labels: [label], priority: 'high', reservations: [{ repo, paths: ['src/**'] }] });
    const second = await createTask(c, { title: 'Fix src/a.ts', labels: [label], priority: 'high', reservations: [{ repo, paths: ['src/a.ts'] }, { resource: 'ci', mode: 'shared' }] });
    const other = await createTask(c, { title: 'Write docs', labels: [label], priority: 'low' });

    const claimed = await claimTask(c, first.id, a.token);
    const ours = await pages<Reservation>(c, `/api/v1/reservations?repo=${encodeURIComponent(repo)}`);
    expect(ours).toEqual([expect.objectContaining({ paths: ['src/**'], holder: { id: a.id, kind: 'agent' }, task_id: first.id, state: 'active', expires_at: claimed.lease.expires_at })]);

    const refused = await c.request('POST', `/api/v1/tasks/${second.id}/claim`, { token: b.token, body: {}, via: last });
    expect(refused.status, refused.body).toBe(409);
    const problem = refused.json<Problem>();
    expect(problem.code).toBe('reservation_conflict');
    expect(problem.detail).toContain(a.id);
    expect(problem.holders).toEqual([expect.objectContaining({ reservation_id: ours[0]?.id, holder: { id: a.id, kind: 'agent' }, task_id: first.id, expires_at: claimed.lease.expires_at })]);
    // Nothing of the refused claim stays: the task is still todo, and no reservation of `ci` was taken.
    expect((await c.request('GET', `/api/v1/tasks/${second.id}`)).json<{ status: string }>().status).toBe('todo');
    expect(await pages<Reservation>(c, '/api/v1/reservations?resource=ci')).toEqual([]);

    const next = await c.request('POST', '/api/v1/tasks/claim', { token: b.token, body: { labels: [label] }, via: last });
    expect(next.status, next.body).toBe(200);
    expect(next.json<{ claims: Claim[] }>().claims.map((claim) => claim.task.id)).toEqual([other.id]);

    // The reservation ends with the lease: once a gives the task back, b claims the second task and its two reservations.
    const gave = await c.request('POST', `/api/v1/leases/${claimed.lease.id}/release`, { token: a.token, body: {} });
    expect(gave.status, gave.body).toBe(200);
    const now = await claimTask(c, second.id, b.token);
    const live = await pages<Reservation>(c, `/api/v1/reservations?holder=${b.id}`);
    expect(live.filter((r) => r.task_id === second.id).map((r) => r.paths ?? 'ci')).toEqual([['src/a.ts'], 'ci']);
    expect(now.lease.expires_at).toBe(live.find((r) => r.task_id === second.id)?.expires_at);
  });

  it(`32 claimers over ${INSTANCES} instance(s) of tasks requiring overlapping paths: exactly one holds them`, async () => {
    const repo = 'github.com/acme/claim-race';
    const label = 'claim-race';
    const globs = [['src/**'], ['src/a.ts'], ['src/*.ts'], ['**/a.ts'], ['src/**/*.ts']];
    await Promise.all(Array.from({ length: 32 }, (_, i) => createTask(c, { title: `race ${i}`, labels: [label], reservations: [{ repo, paths: globs[i % globs.length] }] })));
    const racers = await Promise.all(Array.from({ length: 32 }, () => c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));
    const answers = await Promise.all(
      racers.map((who, i) =>
        i % 2 === 0
          ? c.request('POST', '/api/v1/tasks/claim', { token: who.token, body: { labels: [label] }, via: i % INSTANCES })
          : c.request('POST', '/api/v1/reservations', { token: who.token, body: { repo, paths: globs[i % globs.length] }, via: i % INSTANCES }),
      ),
    );
    for (const res of answers) expect([200, 201, 409], res.body).toContain(res.status);
    const claims = answers.filter((res) => res.status === 200).flatMap((res) => res.json<{ claims: Claim[] }>().claims);
    const acquired = answers.filter((res) => res.status === 201);
    expect(claims.length + acquired.length).toBe(1);
    const active = await pages<Reservation>(c, `/api/v1/reservations?repo=${encodeURIComponent(repo)}`);
    expect(active).toHaveLength(1);
    if (claims[0]) expect(active[0]?.task_id).toBe(claims[0].task.id);
  });

  it('a task shows what it requires, only when it requires something; tasks_update replaces or clears it, recorded, and the next claim takes the new set', async () => {
    const repo = 'github.com/acme/update';
    const label = 'requires-update';
    const plain = await createTask(c, { title: 'Nothing required', labels: [label] });
    expect(plain).not.toHaveProperty('reservations');
    const made = await createTask(c, { title: 'Migrate', labels: [label], reservations: [{ resource: 'staging-db' }] });
    expect(made).toMatchObject({ reservations: [{ resource: 'staging-db' }] });
    const patch = (body: Record<string, unknown>, token?: string) => c.request('PATCH', `/api/v1/tasks/${made.id}`, { body, via: last, ...(token ? { token } : {}) });
    const replaced = await patch({ reservations: [{ repo, paths: ['db/**'] }, { resource: 'staging-db', mode: 'shared' }] });
    expect(replaced.status, replaced.body).toBe(200);
    expect(replaced.json()).toMatchObject({ version: made.version + 1, reservations: [{ repo, paths: ['db/**'] }, { resource: 'staging-db', mode: 'shared' }] });
    // The same set again changes nothing; a bad one is refused as tasks_create refuses it, at its member.
    expect((await patch({ reservations: [{ repo, paths: ['db/**'], mode: 'exclusive' }, { resource: 'staging-db', mode: 'shared' }] })).json()).toMatchObject({ version: made.version + 1 });
    const bad = await patch({ reservations: [{ repo, paths: ['../db'] }] });
    expect(bad.status, bad.body).toBe(400);
    expect(bad.json<{ errors: { pointer: string }[] }>().errors[0]?.pointer).toMatch(/^\/reservations\/0/);
    const full = (await c.request('GET', `/api/v1/tasks/${made.id}?view=full`)).json<{ reservations: unknown[] }>();
    expect(full.reservations).toHaveLength(2);
    const gql = await c.request('POST', '/graphql', { body: { query: `{ task(id: "${made.id}") { reservations { resource repo paths mode } } }` } });
    expect(gql.json<{ data: { task: { reservations: unknown[] } } }>().data.task.reservations).toEqual([{ resource: null, repo, paths: ['db/**'], mode: null }, { resource: 'staging-db', repo: null, paths: null, mode: 'shared' }]);
    const updated = (await taskEvents(c, made.id)).filter((e) => e.type === 'task.updated');
    expect(updated.map((e) => e.data.changes)).toEqual([{ reservations: { from: [{ resource: 'staging-db' }], to: [{ repo, paths: ['db/**'] }, { resource: 'staging-db', mode: 'shared' }] } }]);

    const claim = await claimTask(c, made.id, a.token);
    expect(claim.task).toMatchObject({ reservations: [{ repo }, { resource: 'staging-db' }] });
    const taken = await pages<Reservation & { mode: string; resource: string | null }>(c, `/api/v1/reservations?holder=${a.id}`);
    expect(taken.filter((r) => r.task_id === made.id).map((r) => [r.resource ?? r.paths, r.mode])).toEqual([[['db/**'], 'exclusive'], ['staging-db', 'shared']]);
    // Cleared by the holder while it works: this lease keeps what it took; the task requires nothing from now on.
    const cleared = await patch({ reservations: [], lease_epoch: claim.lease.epoch }, a.token);
    expect(cleared.status, cleared.body).toBe(200);
    expect(cleared.json()).not.toHaveProperty('reservations');
    expect((await pages<Reservation>(c, `/api/v1/reservations?holder=${a.id}`)).filter((r) => r.task_id === made.id)).toHaveLength(2);
  });

  it('a requirement names a resource, or a repo with paths, once each', async () => {
    for (const reservations of [[{ resource: 'x', repo: 'r', paths: ['a'] }], [{ repo: 'r' }], [{ resource: 'x' }, { resource: 'x', mode: 'shared' }], [{ repo: 'r', paths: ['../a'] }]]) {
      const res = await c.request('POST', '/api/v1/tasks', { body: { title: 't', reservations } });
      expect(res.status, res.body).toBe(400);
    }
  });
});
