import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLAIMS_SHED_FLOOR } from '../../src/service/admission.ts';
import { openPostgres } from '../../src/store/database.ts';
import { DEFAULT_TIMEOUTS } from '../../src/store/postgres-pool.ts';
import type { Database } from '../../src/store/database.ts';
import { engine, freshDatabase, type Principal, type Response, startTestServer, type TestServer } from '../harness.ts';
import { pollUntil, untilWaitingOnLock, WORKER_SCOPES } from '../leases/instances.ts';
import { createTask } from '../rest/fixtures.ts';

/*
 * Issue 44: when calls queue for the database's pool, a claim is refused at once (503,
 * Retry-After) instead of waiting out the connect timeout, while a heartbeat still queues and is
 * served. A pool of one connection is held by a write waiting on a row lock that a raw SQL
 * transaction holds, so the queue behind it is real. PostgreSQL only: PGlite has no pool.
 */
describe.skipIf(engine !== 'postgres')('a server whose database pool is busy', () => {
  let t: TestServer;
  let database: Database;
  let url: string;
  let agent: Principal;
  beforeAll(async () => {
    const fresh = await freshDatabase();
    await fresh.database.close();
    url = fresh.url ?? '';
    // Nothing times out while the test holds the lock: the queue stays until it lets go.
    database = openPostgres(url, 1, { timeouts: { ...DEFAULT_TIMEOUTS, connectMs: 120_000, lockMs: 120_000 } });
    t = await startTestServer({ sweepIntervalMs: 0, webhookIntervalMs: 0 }, { database });
    agent = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
  });
  afterAll(() => t.close());

  it('refuses new claims at once while heartbeats wait their turn, and serves both once the queue drains', async () => {
    const locked = (await createTask(t, { title: 'held by a raw transaction' })).id;
    const held = (await createTask(t, { title: 'the agent keeps this one' })).id;
    await createTask(t, { title: 'left in the queue' });
    const claimed = await t.request('POST', `/api/v1/tasks/${held}/claim`, { token: agent.token, body: { ttl_s: 600 } });
    expect(claimed.status, claimed.body).toBe(200);
    const leaseId = claimed.json<{ lease: { id: string } }>().lease.id;

    const raw = new pg.Client({ connectionString: url });
    await raw.connect();
    const queued: Promise<Response>[] = [];
    try {
      await raw.query('BEGIN');
      await raw.query('SELECT id FROM tasks WHERE id = $1 FOR UPDATE', [locked]);
      // The pool's one connection waits on the lock; as many writes as claims are refused from (a
      // pool of one sheds at the default pool's marks) wait for the connection.
      queued.push(t.request('PATCH', `/api/v1/tasks/${locked}`, { body: { title: 'renamed behind the lock' } }));
      await untilWaitingOnLock(raw, 'the write holding the pool');
      queued.push(...Array.from({ length: CLAIMS_SHED_FLOOR }, (_, i) => t.request('POST', '/api/v1/tasks', { body: { title: `queued ${i}` } })));
      await pollUntil(async () => (database.poolLoad().waiting >= CLAIMS_SHED_FLOOR ? true : undefined), 60_000, 'the writes waiting for the connection');

      // Answered while the lock is still held: the claim did not join the queue.
      const refused = await t.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: {} });
      expect(refused.status, refused.body).toBe(503);
      expect(refused.headers['content-type']).toContain('application/problem+json');
      expect(refused.headers['retry-after']).toBe('5');
      const problem = refused.json<{ code: string; retryable: boolean; detail: string; hint: string }>();
      expect(problem.code).toBe('unavailable');
      expect(problem.retryable).toBe(true);
      expect(problem.detail).toContain('Claims are refused first');

      // A heartbeat is let in and queues behind the writes.
      const heartbeat = t.request('POST', `/api/v1/leases/${leaseId}/heartbeat`, { token: agent.token, body: { note: 'still here' } });
      queued.push(heartbeat);
      await pollUntil(async () => (database.poolLoad().waiting > CLAIMS_SHED_FLOOR ? true : undefined), 60_000, 'the heartbeat waiting for the connection');
      await raw.query('COMMIT');
    } finally {
      await raw.end();
    }
    const answers = await Promise.all(queued);
    expect(answers.map((res) => res.status)).toEqual([200, ...Array.from({ length: CLAIMS_SHED_FLOOR }, () => 201), 200]);

    const metrics = await t.request('GET', '/metrics');
    expect(metrics.body).toMatch(/baton_requests_shed_total\{operation="tasks_claim_next"\} 1\b/);
    expect(metrics.body).toMatch(/baton_db_pool_waiting 0\b/);
    // The queue drained: claims are served again.
    const later = await t.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: {} });
    expect(later.status, later.body).toBe(200);
  });
});
