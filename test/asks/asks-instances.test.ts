import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { type Cluster, INSTANCES, startInstances } from '../leases/instances.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, clock);
});
afterAll(() => cluster.close());

describe('ask deadlines across instances', () => {
  it('maintenance passes racing on every instance escalate each ask once, then apply each default once', async () => {
    const first = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const second = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const asks: string[] = [];
    for (let i = 0; i < 12; i++) {
      const task = (await cluster.request('POST', '/api/v1/tasks', { body: { title: `asked ${i}` } })).json<{ id: string }>();
      const body = { question: `Go ${i}?`, options: [{ label: 'yes' }, { label: 'no' }], to: first.id, escalation: [second.id], timeout_s: 60, default: { option: 'no' } };
      const res = await cluster.request('POST', `/api/v1/tasks/${task.id}/asks`, { body, via: i % INSTANCES });
      expect(res.status, res.body).toBe(201);
      asks.push(res.json<{ id: string }>().id);
    }
    const sweep = (via: number) => cluster.request('POST', '/cron/keepalive', { via, token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    const race = async () => {
      const runs = await Promise.all([0, 1, 2, 3].map((i) => sweep(i % INSTANCES)));
      for (const run of runs) expect(run.status, run.body).toBe(200);
    };
    const count = async (type: string) => {
      const rows = await cluster.database.db.selectFrom('events').select(['data']).where('type', '=', type).execute();
      return rows.map((r) => (r.data as { ask_id: string }).ask_id).sort();
    };
    at = new Date(at.getTime() + 61_000);
    await race();
    expect(await count('ask.escalated')).toEqual([...asks].sort());
    expect(await count('ask.defaulted')).toEqual([]);
    at = new Date(at.getTime() + 61_000);
    await race();
    expect(await count('ask.escalated')).toEqual([...asks].sort());
    expect(await count('ask.defaulted')).toEqual([...asks].sort());
    const open = await cluster.database.db.selectFrom('tasks').select('open_asks').where('open_asks', '<>', 0).execute();
    expect(open).toEqual([]);
    const items = await cluster.database.db.selectFrom('inbox_items').select(['principal_id', 'kind']).where('principal_id', '=', second.id).execute();
    expect(items).toHaveLength(asks.length);
  });
});
