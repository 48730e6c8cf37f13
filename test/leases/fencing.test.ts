import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';
import { type Claim, claimTask, createTask, CRON_SECRET, getTask, type LeaseBody, leaseEvents, taskEvents, testClock, WORKER_SCOPES } from './instances.ts';

interface NextAction {
  operation: string;
  method: string;
  href: string;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  fill?: string[];
}

const clock = testClock();
let t: TestServer;
let a: Principal;
let b: Principal;
// No sweeper: a lapsed lease stays on its task until someone claims it, which makes the fencing deterministic.
beforeAll(async () => {
  t = await startTestServer({ leaseTtl: { defaultS: 300, minS: 1, maxS: 3600 }, sweepIntervalMs: 0, cronSecret: CRON_SECRET }, { clock });
  a = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  b = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
});
afterAll(() => t.close());

const patch = (id: string, body: Record<string, unknown>, token?: string) => t.request('PATCH', `/api/v1/tasks/${id}`, { body, ...(token ? { token } : {}) });
const post = (url: string, token?: string, body: Record<string, unknown> = {}) => t.request('POST', url, { body, ...(token ? { token } : {}) });

/** A claims with a 1 s lease, it lapses (no sweeper), B claims: A is epoch 1, B epoch 2. */
async function takenOver(): Promise<{ id: string; old: Claim; fresh: Claim }> {
  const task = await createTask(t);
  const old = await claimTask(t, task.id, a.token, { ttl_s: 1 });
  expect(old.lease.epoch).toBe(1);
  expect(old.task.lease).toMatchObject({ id: old.lease.id, epoch: 1 });
  clock.setPast(old.lease.expires_at);
  const fresh = await claimTask(t, task.id, b.token);
  expect(fresh.lease).toMatchObject({ epoch: 2, holder: { id: b.id, kind: 'agent' } });
  return { id: task.id, old, fresh };
}

describe('fencing: a lease that lapsed and was re-granted', () => {
  it('refuses every write from the old holder', async () => {
    const { id, old } = await takenOver();
    const stale = expectProblem(await patch(id, { title: 'stale write', lease_epoch: 1 }, a.token), 409, 'lease_expired');
    expect(stale.current_epoch).toBe(2);
    expectProblem(await patch(id, { status: 'in_review', lease_epoch: 1 }, a.token), 409, 'lease_expired');
    const notHolder = expectProblem(await patch(id, { title: 'no epoch' }, a.token), 403, 'not_lease_holder');
    expect(notHolder.holder).toEqual({ id: b.id, kind: 'agent' });
    expectProblem(await post(`/api/v1/leases/${old.lease.id}/heartbeat`, a.token), 409, 'lease_expired');
    expectProblem(await post(`/api/v1/leases/${old.lease.id}/release`, a.token), 409, 'lease_expired');

    const task = await getTask(t, id);
    expect(task).toMatchObject({ status: 'in_progress', title: 'a task', lease: { holder: { id: b.id }, epoch: 2 } });
    const events = await taskEvents(t, id);
    expect(events.filter((e) => e.type === 'task.updated')).toHaveLength(0);
    expect(leaseEvents(events, 'lease.renewed', old.lease.id)).toHaveLength(0);
    expect(leaseEvents(events, 'lease.released', old.lease.id)).toHaveLength(0);
  });

  it('lets the new holder finish with its epoch; changes requested hand it back under epoch 3', async () => {
    const { id, fresh } = await takenOver();
    const done = await patch(id, { status: 'in_review', lease_epoch: 2 }, b.token);
    expect(done.status, done.body).toBe(200);
    expect(done.json()).toMatchObject({ status: 'in_review', lease: null });
    const ended = await t.request('GET', `/api/v1/leases/${fresh.lease.id}`, { token: b.token });
    expect(ended.json<LeaseBody>()).toMatchObject({ state: 'ended', ended_at: expect.any(String) as string });

    // A human asks for changes: the work goes back to B under a fresh lease.
    const back = await patch(id, { status: 'in_progress' });
    expect(back.status, back.body).toBe(200);
    const task = back.json<Claim['task']>();
    expect(task.lease).toMatchObject({ holder: { id: b.id, kind: 'agent' }, epoch: 3 });
    expect(task.lease?.id).not.toBe(fresh.lease.id);
    const held = await t.request('GET', '/api/v1/leases?holder=me&state=active', { token: b.token });
    expect(held.json<{ data: LeaseBody[] }>().data.filter((l) => l.task_id === id)).toEqual([
      expect.objectContaining({ id: task.lease?.id, epoch: 3, state: 'active' }),
    ]);
    expectProblem(await patch(id, { title: 'epoch 2 is stale now', lease_epoch: 2 }, b.token), 409, 'lease_expired');
    const fixed = await patch(id, { title: 'changes made', lease_epoch: 3 }, b.token);
    expect(fixed.status, fixed.body).toBe(200);
  });

  it('refuses the holder itself once its lease lapsed, with or without the current epoch', async () => {
    const task = await createTask(t);
    const { lease } = await claimTask(t, task.id, b.token, { ttl_s: 1 });
    clock.setPast(lease.expires_at);
    expectProblem(await patch(task.id, { status: 'in_review', lease_epoch: lease.epoch }, b.token), 409, 'lease_expired');
    expectProblem(await patch(task.id, { status: 'in_review' }, b.token), 409, 'lease_expired');
    expect((await getTask(t, task.id)).status).toBe('in_progress');
  });

  it('a hand-in under a lease that is gone (swept after it lapsed, or released by a human) is lease_expired, as the same PATCH is', async () => {
    const sweep = () => t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    const lapsed = await createTask(t);
    const first = await claimTask(t, lapsed.id, b.token, { ttl_s: 1 });
    clock.setPast(first.lease.expires_at);
    expect((await sweep()).status).toBe(200);
    const released = await createTask(t);
    const second = await claimTask(t, released.id, b.token);
    expect((await post(`/api/v1/leases/${second.lease.id}/release`, undefined, { note: 'taking it back' })).status).toBe(200);
    for (const { id, lease } of [{ id: lapsed.id, lease: first.lease }, { id: released.id, lease: second.lease }]) {
      expect((await getTask(t, id)).status).toBe('todo');
      expectProblem(await patch(id, { status: 'in_review', lease_epoch: lease.epoch }, b.token), 409, 'lease_expired');
      const handIn = expectProblem(await post(`/api/v1/tasks/${id}/hand_in`, b.token, { lease_epoch: lease.epoch, summary: 'done' }), 409, 'lease_expired');
      expect(handIn).toMatchObject({ task_id: id, current_epoch: lease.epoch });
    }
  });
});

describe('who may act on and see a lease', () => {
  it('a human can release anyone’s lease', async () => {
    const task = await createTask(t);
    const { lease } = await claimTask(t, task.id, b.token);
    const res = await post(`/api/v1/leases/${lease.id}/release`, undefined, { note: 'reassigning' });
    expect(res.status, res.body).toBe(200);
    expect(res.json<Claim>()).toMatchObject({ task: { status: 'todo', lease: null }, lease: { id: lease.id, state: 'released' } });
    const released = leaseEvents(await taskEvents(t, task.id), 'lease.released', lease.id);
    expect(released).toHaveLength(1);
    expect(released[0]?.actor.kind).toBe('human');
  });

  it('an agent cannot see another agent’s leases; a human can', async () => {
    const task = await createTask(t);
    const { lease } = await claimTask(t, task.id, b.token);
    expectProblem(await t.request('GET', `/api/v1/leases?holder=${b.id}`, { token: a.token }), 403, 'not_lease_holder');
    expectProblem(await t.request('GET', `/api/v1/leases/${lease.id}`, { token: a.token }), 404, 'not_found');
    const mine = await t.request('GET', '/api/v1/leases', { token: a.token });
    expect(mine.status, mine.body).toBe(200);
    expect(mine.json<{ data: LeaseBody[] }>().data.every((l) => l.holder.id === a.id)).toBe(true);

    const human = await t.request('GET', `/api/v1/leases?holder=${b.id}&state=active`);
    expect(human.status, human.body).toBe(200);
    expect(human.json<{ data: LeaseBody[] }>().data.map((l) => l.id)).toContain(lease.id);
    expect((await t.request('GET', `/api/v1/leases/${lease.id}`)).status).toBe(200);
  });

  it('already_claimed names the holder, its kind and the lease expiry', async () => {
    const task = await createTask(t);
    const { lease } = await claimTask(t, task.id, b.token);
    const problem = expectProblem(await post(`/api/v1/tasks/${task.id}/claim`, a.token), 409, 'already_claimed');
    expect(problem.holder).toEqual({ id: b.id, kind: 'agent' });
    expect(problem.lease_expires_at).toBe(lease.expires_at);
    expect(problem.detail).toContain('agent');
    expect(problem.detail).toContain(lease.expires_at);
  });
});

describe('blocked_by', () => {
  it('claim-next skips a task waiting on an unfinished blocker; it becomes claimable once the blocker is done', async () => {
    const label = 'blocked-flow';
    const blocker = await createTask(t, { title: 'blocker' });
    const dependent = await createTask(t, { title: 'dependent', labels: [label], blocked_by: [blocker.id] });
    const free = await createTask(t, { title: 'free', labels: [label] });
    const claimNext = async (token: string) => {
      const res = await post('/api/v1/tasks/claim', token, { labels: [label] });
      expect(res.status, res.body).toBe(200);
      return res.json<{ claims: Claim[] }>().claims.map((x) => x.task.id);
    };
    // The dependent is older than `free`, so only the blocker check makes claim-next skip it.
    expect(await claimNext(a.token)).toEqual([free.id]);
    expect(await claimNext(a.token)).toEqual([]);
    const pending = expectProblem(await post(`/api/v1/tasks/${dependent.id}/claim`, a.token), 409, 'dependencies_pending');
    expect(pending.waiting_on).toEqual([blocker.id]);

    // Finish the blocker: claim it, hand it to review with its epoch, a human marks it done.
    const { lease } = await claimTask(t, blocker.id, b.token);
    const review = await patch(blocker.id, { status: 'in_review', lease_epoch: lease.epoch }, b.token);
    expect(review.status, review.body).toBe(200);
    expectProblem(await post(`/api/v1/tasks/${dependent.id}/claim`, a.token), 409, 'dependencies_pending');
    expect(await claimNext(a.token)).toEqual([]);
    const approved = await patch(blocker.id, { status: 'done' });
    expect(approved.status, approved.body).toBe(200);

    expect((await getTask(t, dependent.id, a.token)).waiting_on).toEqual([]);
    expect(await claimNext(a.token)).toEqual([dependent.id]);
  });
});

describe('next_actions', () => {
  const ops = (actions: NextAction[]) => actions.map((x) => x.operation);

  it('offer a todo task’s claim, the holder its heartbeat and hand-in with the epoch, and a non-holder agent only other work', async () => {
    const created = await createTask(t);
    const todo = await getTask(t, created.id, a.token);
    const claim = (todo.next_actions as NextAction[]).find((x) => x.operation === 'tasks_claim');
    expect(claim).toMatchObject({ method: 'POST', href: `/api/v1/tasks/${created.id}/claim` });

    // Follow the offered claim as A.
    const claimed = await post(claim?.href ?? '', a.token, claim?.body ?? {});
    expect(claimed.status, claimed.body).toBe(200);
    const { lease } = claimed.json<Claim>();

    const held = (await getTask(t, created.id, a.token)).next_actions as NextAction[];
    expect(ops(held)).toEqual(['leases_heartbeat', 'tasks_hand_in']);
    expect(held.find((x) => x.operation === 'leases_heartbeat')?.href).toBe(`/api/v1/leases/${lease.id}/heartbeat`);
    const handIn = held.find((x) => x.operation === 'tasks_hand_in');
    expect(handIn).toMatchObject({ method: 'POST', href: `/api/v1/tasks/${created.id}/hand_in`, body: { lease_epoch: 1 }, fill: ['summary'] });

    expect(ops((await getTask(t, created.id, b.token)).next_actions as NextAction[])).toEqual(['tasks_claim_next']);

    // The holder follows the offered hand-in, fenced by its epoch, with its summary written in.
    expect(handIn?.headers).not.toHaveProperty('If-Match');
    const moved = await t.request('POST', handIn?.href ?? '', { token: a.token, body: { ...handIn?.body, summary: 'done' } });
    expect(moved.status, moved.body).toBe(200);
    expect(moved.json()).toMatchObject({ status: 'in_review', handoff: { summary: 'done' } });
  });
});
