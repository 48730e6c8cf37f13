import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { type Cluster, INSTANCES, startInstances } from '../leases/instances.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-25T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, clock);
});
afterAll(() => cluster.close());

describe('task.overdue across instances', () => {
  it('maintenance passes racing on every instance write exactly one event per overdue task', async () => {
    const due = new Date(at.getTime() + 60_000).toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      const res = await cluster.request('POST', '/api/v1/tasks', { body: { title: `due ${i}`, due_at: due } });
      expect(res.status, res.body).toBe(201);
      ids.push(res.json<{ id: string }>().id);
    }
    at = new Date(at.getTime() + 61_000);
    const sweep = (via: number) => cluster.request('POST', '/cron/keepalive', { via, token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    const runs = await Promise.all([0, 1, 2, 3].map((i) => sweep(i % INSTANCES)));
    for (const run of runs) expect(run.status, run.body).toBe(200);
    const rows = await cluster.database.db.selectFrom('events').select(['subject']).where('type', '=', 'task.overdue').execute();
    expect(rows.map((r) => r.subject).sort()).toEqual([...ids].sort());
  });
});

describe('parent moves racing across instances', () => {
  it('A under B and B under A at once: exactly one wins, the other is a parent_cycle; never a cycle', async () => {
    for (let round = 0; round < 5; round++) {
      const make = async (title: string) => (await cluster.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>().id;
      const a = await make(`a ${round}`);
      const b = await make(`b ${round}`);
      const [first, second] = await Promise.all([
        cluster.request('PATCH', `/api/v1/tasks/${a}`, { body: { parent_id: b }, via: 0 }),
        cluster.request('PATCH', `/api/v1/tasks/${b}`, { body: { parent_id: a }, via: INSTANCES - 1 }),
      ]);
      expect([first.status, second.status].sort()).toEqual([200, 422]);
      const loser = first.status === 422 ? first : second;
      expect(loser.json<{ code: string }>().code).toBe('parent_cycle');
      const parents = await cluster.database.db.selectFrom('tasks').select(['id', 'parent_id']).where('id', 'in', [a, b]).execute();
      expect(parents.filter((p) => p.parent_id !== null)).toHaveLength(1);
    }
  });

  it('a parent moving to done (cancelling its subtasks) while a task moves under one of them: both answer, no deadlock', async () => {
    for (let round = 0; round < 5; round++) {
      const make = async (body: Record<string, unknown>) => (await cluster.request('POST', '/api/v1/tasks', { body })).json<{ id: string }>().id;
      const parent = await make({ title: `parent ${round}` });
      const child = await make({ title: `child ${round}`, parent_id: parent });
      const mover = await make({ title: `mover ${round}` });
      await cluster.database.db.updateTable('tasks').set({ status: 'in_review' }).where('id', '=', parent).execute();
      const [done, moved] = await Promise.all([
        cluster.request('PATCH', `/api/v1/tasks/${parent}`, { body: { status: 'done', cancel_children: true }, via: 0 }),
        cluster.request('PATCH', `/api/v1/tasks/${mover}`, { body: { parent_id: child }, via: INSTANCES - 1 }),
      ]);
      expect(done.status, done.body).toBe(200);
      expect(moved.status, moved.body).toBe(200);
    }
  });
});
