import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { type Cluster, INSTANCES, startInstances } from '../leases/instances.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
/** The SLA of asks, approvals and reviews: past it they escalate to the principal named `lead`. */
const SLA_S = 3600;
const sweep = (via: number) => cluster.request('POST', '/cron/keepalive', { via, token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
/** The maintenance pass racing on every instance (four passes over two instances on PostgreSQL). */
const race = async () => {
  const runs = await Promise.all([0, 1, 2, 3].map((i) => sweep(i % INSTANCES)));
  for (const run of runs) expect(run.status, run.body).toBe(200);
};

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { cronSecret: CRON_SECRET, sweepIntervalMs: 0, escalation: { askS: SLA_S, approvalS: SLA_S, reviewS: SLA_S, to: ['lead'] } }, clock);
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

  it('an ask, an approval and a review past their SLA escalate once across instances: marked overdue, the target notified, counted in /metrics; then the ask escalates and defaults', async () => {
    const scopes = ['tasks:read', 'tasks:write', 'tasks:claim'] as const;
    const agent = await cluster.addPrincipal({ kind: 'agent', scopes: [...scopes] });
    const first = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const second = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const lead = await cluster.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    await cluster.database.db.updateTable('agents').set({ name: 'lead' }).where('id', '=', lead.id).execute();
    const asAgent = async <T = { id: string }>(method: string, url: string, body?: unknown, status = 201) => {
      const res = await cluster.request(method, url, { token: agent.token, ...(body === undefined ? {} : { body }) });
      expect(res.status, res.body).toBe(status);
      return res.json<T>();
    };
    const asked = await asAgent('POST', '/api/v1/tasks', { title: 'Pick a region' });
    const ask = await asAgent('POST', `/api/v1/tasks/${asked.id}/asks`, { question: 'Which region?', options: [{ label: 'eu' }, { label: 'us' }], to: first.id, escalation: [second.id], timeout_s: 2 * SLA_S, default: { option: 'eu' } });
    const reviewed = await asAgent('POST', '/api/v1/tasks', { title: 'Write the notes' });
    const held = await asAgent<{ lease: { epoch: number } }>('POST', `/api/v1/tasks/${reviewed.id}/claim`, {}, 200);
    await asAgent('PATCH', `/api/v1/tasks/${reviewed.id}`, { status: 'in_review', lease_epoch: held.lease.epoch }, 200);
    const doomed = await asAgent('POST', '/api/v1/tasks', { title: 'Drop the old branch' });
    const approvalId = (await asAgent('DELETE', `/api/v1/tasks/${doomed.id}`, undefined, 202)).id;

    const events = async (type: string) => cluster.database.db.selectFrom('events').select(['subject', 'data']).where('type', '=', type).execute();
    const overdueMetric = async (kind: string) => {
      const res = await cluster.request('GET', '/metrics');
      return Number(new RegExp(`^baton_overdue\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(res.body)?.[1]);
    };
    at = new Date(at.getTime() + (SLA_S - 1) * 1000);
    await race();
    expect(await events('ask.overdue')).toEqual([]);

    at = new Date(at.getTime() + 2000);
    await race();
    await race();
    expect((await events('ask.overdue')).map((e) => e.subject)).toEqual([asked.id]);
    expect((await events('task.review_overdue')).map((e) => e.subject)).toEqual([reviewed.id]);
    expect((await events('approval.overdue')).map((e) => [e.subject, (e.data as { notified: string[] }).notified])).toEqual([[approvalId, [lead.id]]]);
    const leadItems = await cluster.database.db.selectFrom('inbox_items').select(['kind', 'ref_id', 'task_id']).where('principal_id', '=', lead.id).orderBy('ref_id').execute();
    expect(leadItems.map((i) => [i.kind, i.ref_id]).sort()).toEqual([['overdue', approvalId], ['overdue', ask.id], ['overdue', reviewed.id]].sort());
    // The addressee's item says it is overdue; the board's tasks say what waits too long.
    const firstInbox = (await cluster.request('GET', '/api/v1/inbox?kind=ask', { token: first.token })).json<{ data: { ref_id: string; overdue_at?: string }[] }>();
    expect(firstInbox.data).toEqual([expect.objectContaining({ ref_id: ask.id, overdue_at: at.toISOString() })]);
    const board = (await cluster.request('GET', '/api/v1/tasks?limit=100')).json<{ data: { id: string; overdue_asks?: number; review_overdue?: boolean }[] }>().data;
    expect(board.find((t) => t.id === asked.id)).toMatchObject({ overdue_asks: 1 });
    expect(board.find((t) => t.id === reviewed.id)).toMatchObject({ review_overdue: true });
    expect((await cluster.request('GET', `/api/v1/approvals/${approvalId}`)).json()).toMatchObject({ overdue_at: at.toISOString() });
    expect([await overdueMetric('ask'), await overdueMetric('approval'), await overdueMetric('review')]).toEqual([1, 1, 1]);

    // The ask's own deadline: it goes to the next addressee (still overdue), then its default applies.
    at = new Date(at.getTime() + SLA_S * 1000);
    await race();
    expect((await events('ask.escalated')).filter((e) => (e.data as { ask_id: string }).ask_id === ask.id)).toHaveLength(1);
    const secondInbox = (await cluster.request('GET', '/api/v1/inbox?kind=ask', { token: second.token })).json<{ data: { ref_id: string; overdue_at?: string }[] }>();
    expect(secondInbox.data).toEqual([expect.objectContaining({ ref_id: ask.id, overdue_at: expect.any(String) as unknown })]);
    at = new Date(at.getTime() + 2 * SLA_S * 1000 + 1000);
    await race();
    await race();
    expect((await events('ask.defaulted')).filter((e) => (e.data as { ask_id: string }).ask_id === ask.id)).toHaveLength(1);
    expect((await events('ask.overdue'))).toHaveLength(1);
    const after = (await cluster.request('GET', `/api/v1/tasks/${asked.id}`)).json<{ open_asks?: number; overdue_asks?: number }>();
    expect(after.open_asks ?? 0).toBe(0);
    expect(after.overdue_asks ?? 0).toBe(0);
    expect(await overdueMetric('ask')).toBe(0);
  });
});
