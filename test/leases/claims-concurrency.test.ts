import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { engine } from '../harness.ts';
import type { TaskBody } from '../rest/fixtures.ts';
import { type Claim, type Cluster, type EventBody, pages, startInstances, WORKER_SCOPES } from './instances.ts';

/**
 * Tasks in the queue. PGlite runs one transaction at a time, so its claimers take turns whatever
 * their number: 400 there prove as much as 1,000 and cost a minute less of every run.
 */
const TASKS = engine === 'pglite' ? 400 : 1000;
/** Concurrent task creations while seeding the queue. */
const CREATE_PARALLEL = 16;

interface Plan {
  instances: number;
  claimers: number;
}

interface Taken {
  claimer: string;
  taskId: string;
  leaseId: string;
}

describe.skipIf(engine === 'pglite')('claim-next across two instances on one PostgreSQL (PGlite is single-process: it runs one instance below)', () => {
  it(`32 claimers on 2 instances claim ${TASKS} tasks: each exactly once, one task.claimed event each`, { timeout: 600_000 }, async () => {
    await claimEverything({ instances: 2, claimers: 32 });
  });
});

describe.skipIf(engine !== 'pglite')('claim-next on one PGlite instance (PostgreSQL runs the two-instance variant above)', () => {
  it(`8 claimers claim ${TASKS} tasks: each exactly once, one task.claimed event each`, { timeout: 600_000 }, async () => {
    await claimEverything({ instances: 1, claimers: 8 });
  });
});

async function claimEverything(plan: Plan): Promise<void> {
  const c = await startInstances(plan.instances);
  try {
    const created = await seed(c, plan.instances);
    expect(created.size).toBe(TASKS);

    // Every fourth claimer takes 16 at a time; the rest one. Claimers alternate between instances.
    const claimers = await Promise.all(
      Array.from({ length: plan.claimers }, async (_, n) => ({
        principal: await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES }),
        limit: n % 4 === 3 ? 16 : 1,
        via: n % plan.instances,
      })),
    );
    const taken: Taken[] = [];
    await Promise.all(
      claimers.map(async ({ principal, limit, via }) => {
        for (;;) {
          const res = await c.request('POST', '/api/v1/tasks/claim', { token: principal.token, body: { limit }, via });
          expect(res.status, res.body).toBe(200);
          const body = res.json<{ claims: Claim[]; retry_after_s: number | null }>();
          if (body.claims.length === 0) {
            expect(body.retry_after_s).toBeGreaterThan(0);
            return;
          }
          expect(body.claims.length).toBeLessThanOrEqual(limit);
          expect(body.retry_after_s).toBeNull();
          for (const { task, lease } of body.claims) {
            expect(task.status).toBe('in_progress');
            expect(lease).toMatchObject({ task_id: task.id, holder: { id: principal.id, kind: 'agent' }, epoch: 1, state: 'active' });
            taken.push({ claimer: principal.id, taskId: task.id, leaseId: lease.id });
          }
        }
      }),
    );

    // Exactly once: no task twice, none missing, one lease per claim.
    const takenIds = taken.map((x) => x.taskId);
    expect(takenIds).toHaveLength(TASKS);
    expect(new Set(takenIds)).toEqual(created);
    expect(new Set(taken.map((x) => x.leaseId)).size).toBe(TASKS);

    // The timeline holds exactly one task.claimed per task, naming the lease its claimer received.
    const claimedEvents = await pages<EventBody>(c, '/api/v1/events?types=task.claimed');
    expect(claimedEvents).toHaveLength(TASKS);
    expect(new Set(claimedEvents.map((e) => e.subject))).toEqual(created);
    const byLease = new Map(taken.map((x) => [x.leaseId, x]));
    for (const event of claimedEvents) {
      const claim = byLease.get(event.data.lease_id as string);
      expect(claim, `task.claimed ${event.id} names a lease no claimer received`).toBeDefined();
      expect(event).toMatchObject({ subject: claim?.taskId, actor: { id: claim?.claimer, kind: 'agent' } });
    }

    const counts = await sql<{ status: string; n: string }>`SELECT status, count(*) AS n FROM tasks GROUP BY status`.execute(c.database.db);
    expect(counts.rows.map((row) => [row.status, Number(row.n)])).toEqual([['in_progress', TASKS]]);
    const leases = await sql<{ state: string; n: string }>`SELECT state, count(*) AS n FROM leases GROUP BY state`.execute(c.database.db);
    expect(leases.rows.map((row) => [row.state, Number(row.n)])).toEqual([['active', TASKS]]);

    // The queue is empty for everyone now.
    const late = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const empty = await c.request('POST', '/api/v1/tasks/claim', { token: late.token, body: { limit: 100 } });
    expect(empty.status, empty.body).toBe(200);
    expect(empty.json()).toEqual({ claims: [], retry_after_s: expect.any(Number) as number, next_claimable_at: null });
  } finally {
    await c.close();
  }
}

/** Creates the tasks as the admin, a few at a time, spread over the instances. */
async function seed(c: Cluster, instances: number): Promise<Set<string>> {
  const ids = new Set<string>();
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATE_PARALLEL }, async (_, lane) => {
      for (let i = next++; i < TASKS; i = next++) {
        const res = await c.request('POST', '/api/v1/tasks', { body: { title: `task ${i}` }, via: lane % instances });
        expect(res.status, res.body).toBe(201);
        ids.add(res.json<TaskBody>().id);
      }
    }),
  );
  return ids;
}
