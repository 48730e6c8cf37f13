import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, freshDatabase, type Principal, startTestServer, type TestServer } from '../harness.ts';
import { openPostgres } from '../../src/store/database.ts';
import { claimBatch, pollUntil, testClock, untilWaitingOnLock, WORKER_SCOPES } from './instances.ts';

/*
 * Issue 22 item 6: lease times were taken at request start, so a claim or heartbeat that waited on
 * a task's row lock got a shorter lease than it asked for, dated before the lease it replaced had
 * ended. A raw SQL transaction holds the lock while the test moves the injected clock. PostgreSQL
 * only: PGlite runs one connection at a time, so nothing there ever waits on a row lock.
 */

interface LeaseBody {
  id: string;
  acquired_at: string;
  expires_at: string;
  ended_at: string | null;
}

describe.skipIf(engine !== 'postgres')('a lease write that waited on a row lock', () => {
  const clock = testClock();
  let t: TestServer;
  let url: string;
  let holder: Principal;
  let claimer: Principal;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    url = fresh.url ?? '';
    t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 }, { database: fresh.database, clock });
    holder = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    claimer = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => t.close());

  /** Runs `send` while a raw transaction holds the task's row lock; once `send` waits on it, moves the clock by `waitMs` and lets go. */
  async function whileLocked<T>(taskId: string, waitMs: number, send: () => Promise<T>): Promise<T> {
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query('BEGIN');
      await raw.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [taskId]);
      const pending = send();
      await untilWaitingOnLock(raw, 'the request waiting on the row lock');
      clock.advance(waitMs);
      await raw.query('COMMIT');
      return await pending;
    } finally {
      await raw.end();
    }
  }

  async function newTask(title: string): Promise<string> {
    const res = await t.request('POST', '/api/v1/tasks', { body: { title } });
    expect(res.status, res.body).toBe(201);
    return res.json<{ id: string }>().id;
  }

  it('a claim is timed from when it got the lock: it starts after the lapsed lease ended, for the whole TTL asked', async () => {
    const taskId = await newTask('claimed after a wait');
    const first = await t.request('POST', `/api/v1/tasks/${taskId}/claim`, { token: holder.token, body: { ttl_s: 30 } });
    expect(first.status, first.body).toBe(200);
    const lapsed = first.json<{ lease: LeaseBody }>().lease;
    clock.advance(10_000);
    // The claim arrives 10 s in, while the first lease is live; by the time it gets the lock, 40 s in, that lease has lapsed.
    const res = await whileLocked(taskId, 30_000, () => t.request('POST', `/api/v1/tasks/${taskId}/claim`, { token: claimer.token, body: { ttl_s: 60 } }));
    expect(res.status, res.body).toBe(200);
    const lease = res.json<{ lease: LeaseBody }>().lease;
    expect(lease.acquired_at).toBe(clock.now().toISOString());
    expect(Date.parse(lease.expires_at) - Date.parse(lease.acquired_at)).toBe(60_000);
    const previous = (await t.request('GET', `/api/v1/leases/${lapsed.id}`)).json<LeaseBody>();
    expect(Date.parse(previous.ended_at ?? '')).toBeLessThanOrEqual(Date.parse(lease.acquired_at));
  });

  it('a heartbeat is timed from when it got the lock: the lease runs its whole TTL from then', async () => {
    const taskId = await newTask('renewed after a wait');
    const claimed = await t.request('POST', `/api/v1/tasks/${taskId}/claim`, { token: holder.token, body: { ttl_s: 30 } });
    const lease = claimed.json<{ lease: LeaseBody }>().lease;
    clock.advance(10_000);
    const res = await whileLocked(taskId, 5_000, () => t.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: holder.token, body: {} }));
    expect(res.status, res.body).toBe(200);
    expect(res.json<LeaseBody>().expires_at).toBe(new Date(clock.now().getTime() + 30_000).toISOString());
  });
});

describe.skipIf(engine !== 'postgres')('heartbeats beside one waiting on a row lock', () => {
  let t: TestServer;
  let url: string;
  let holder: Principal;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    url = fresh.url ?? '';
    await fresh.database.close();
    // Statements that wait on a lock far longer than this test may take (not the 5 s default, after which the waiting group would fail and let the others by).
    const patient = openPostgres(url, 10, { timeouts: { connectMs: 5_000, statementMs: 600_000, lockMs: 600_000, idleInTransactionMs: 600_000 } });
    t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 }, { database: patient });
    holder = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => t.close());

  it('are answered while it waits: past a full group waiting, another group runs beside the one held up', async () => {
    // One lease to hold up, and more than a group's worth (64) of others, all the holder's.
    const [blocked, ...others] = await claimBatch(t, holder.token, 81, 'beside-a-lock');
    expect(others).toHaveLength(80);
    const heartbeat = (lease: { id: string }) => t.request('POST', `/api/v1/leases/${lease.id}/heartbeat`, { token: holder.token, body: {} });
    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    try {
      await raw.query('BEGIN');
      await raw.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [blocked?.task.id]);
      // The first heartbeat's group (of one) waits on the lock for as long as the raw transaction lasts.
      const waiting = blocked ? heartbeat(blocked.lease) : Promise.reject(new Error('no lease claimed'));
      await untilWaitingOnLock(raw, 'the heartbeat waiting on the row lock');
      // The others are answered while it still waits: with one group at a time they would queue behind it for as long as the lock is held.
      let settled: Awaited<ReturnType<typeof heartbeat>>[] | undefined;
      void Promise.all(others.map((claim) => heartbeat(claim.lease))).then((all) => (settled = all));
      const answered = await pollUntil(async () => settled, 60_000, 'the other heartbeats, answered while one waits on the lock');
      expect(answered.map((res) => res.status), answered[0]?.body).toEqual(others.map(() => 200));
      expect(answered.map((res) => res.json<LeaseBody>().id)).toEqual(others.map((claim) => claim.lease.id));
      await raw.query('COMMIT');
      expect((await waiting).status).toBe(200);
    } finally {
      await raw.query('ROLLBACK').catch(() => undefined);
      await raw.end();
    }
  });
});
