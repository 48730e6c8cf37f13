import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem, taskRow } from '../rest/fixtures.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let t: TestServer;
beforeAll(async () => {
  // No in-process workers: whatever maintenance happens here, cron did it.
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

const cron = (method: 'GET' | 'POST', authorization?: string) =>
  t.request(method, '/cron/keepalive', { token: null, key: null, ...(authorization ? { headers: { authorization } } : {}) });

describe('/cron/keepalive', () => {
  it('refuses a missing or wrong secret with 401, and a Baton token is not the secret', async () => {
    expectProblem(await cron('GET'), 401, 'unauthenticated');
    expectProblem(await cron('POST', 'Bearer not-the-secret'), 401, 'invalid_token');
    expectProblem(await cron('GET', `Bearer ${t.adminToken}`), 401, 'invalid_token');
  });

  it('with the secret, answers a JSON report of every pass, on GET and POST', async () => {
    for (const method of ['GET', 'POST'] as const) {
      const res = await cron(method, `Bearer ${CRON_SECRET}`);
      expect(res.status, res.body).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.json()).toMatchObject({
        ok: true,
        database: 'ok',
        passes: { lease_expiry: { ok: true, expired: 0, warned: 0 }, pruning: { ok: true, idempotency_keys: expect.any(Number) as number } },
      });
    }
  });

  it('expires a lapsed lease through cron alone, as the system actor', async () => {
    const task = await createTask(t);
    const claim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {} });
    expect(claim.status, claim.body).toBe(200);
    // Test setup: move the lease's end into the past instead of waiting for it.
    const past = new Date(Date.now() - 1000);
    await t.database.db.updateTable('tasks').set({ lease_expires_at: past }).where('id', '=', task.id).execute();
    await t.database.db.updateTable('leases').set({ expires_at: past }).where('task_id', '=', task.id).execute();
    expect((await taskRow(t, task.id)).status).toBe('in_progress');

    const res = await cron('POST', `Bearer ${CRON_SECRET}`);
    expect(res.json()).toMatchObject({ passes: { lease_expiry: { expired: 1 } } });
    expect((await taskRow(t, task.id)).status).toBe('todo');
    const expired = (await eventsOf(t, task.id)).filter((e) => e.type === 'lease.expired');
    expect(expired.map((e) => e.actor_kind)).toEqual(['system']);
  });
});
