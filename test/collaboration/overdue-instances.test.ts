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
