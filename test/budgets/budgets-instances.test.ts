import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Cluster, INSTANCES, startInstances, WORKER_SCOPES } from '../leases/instances.ts';

/**
 * Budgets under concurrency (issue 41 §2): 32 agents claim and report against one nearly spent
 * budget through every instance on one database (two on PostgreSQL; PGlite is single-process).
 */
const AGENTS = 32;
const REPORT = 100;

let cluster: Cluster;
beforeAll(async () => {
  cluster = await startInstances(INSTANCES, { sweepIntervalMs: 0 });
});
afterAll(() => cluster.close());

const budgetOf = async (body: Record<string, unknown>) => {
  const res = await cluster.request('POST', '/api/v1/budgets', { body: { name: 'hot budget', ...body } });
  expect(res.status, res.body).toBe(201);
  return res.json<{ id: string }>().id;
};
const spentOf = async (id: string) => (await cluster.request('GET', `/api/v1/budgets/${id}`)).json<{ spent: number; limit: number }>();
const tasks = async (label: string, n: number) => {
  for (let i = 0; i < n; i++) expect((await cluster.request('POST', '/api/v1/tasks', { body: { title: `hot ${i}`, labels: [label] } })).status).toBe(201);
};
const agents = () => Promise.all(Array.from({ length: AGENTS }, () => cluster.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES })));

describe('budgets across instances', () => {
  it('32 agents claiming and reporting against a nearly spent budget overshoot it by at most the attempts in flight, and count no report twice', async () => {
    const label = `hot-${randomUUID().slice(0, 8)}`;
    const budget = await budgetOf({ applies_to: 'label', target: label, unit: 'tokens', limit: 10_000 });
    await tasks(label, AGENTS * 2 + 1);
    // Spend 9,900 of 10,000 first: one report of 100 more exhausts it.
    const first = await cluster.request('POST', '/api/v1/tasks/claim', { body: { labels: [label] } });
    const lease = first.json<{ claims: { lease: { id: string } }[] }>().claims[0]?.lease.id;
    expect((await cluster.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 9_900 } })).status).toBe(200);

    const workers = await agents();
    const outcomes = await Promise.all(
      workers.map(async (agent, i) => {
        const via = i % INSTANCES;
        const claimed = await cluster.request('POST', '/api/v1/tasks/claim', { body: { labels: [label] }, token: agent.token, via });
        if (claimed.status !== 200) return { granted: false, code: claimed.json<{ code: string }>().code, again: undefined };
        const held = claimed.json<{ claims: { lease: { id: string } }[] }>().claims[0]?.lease.id;
        const key = randomUUID();
        // The report, and its retry with the same key through the other instance: counted once.
        const report = (through: number) => cluster.request('POST', `/api/v1/leases/${held}/usage`, { body: { output_tokens: REPORT }, key, token: agent.token, via: through });
        expect((await report(via)).status).toBe(200);
        expect((await report((via + 1) % INSTANCES)).status).toBe(200);
        const again = await cluster.request('POST', '/api/v1/tasks/claim', { body: { labels: [label] }, token: agent.token, via });
        return { granted: true, code: undefined, again: again.status === 200 ? 'claimed' : again.json<{ code: string }>().code };
      }),
    );
    const granted = outcomes.filter((o) => o.granted).length;
    for (const o of outcomes) if (!o.granted) expect(o.code).toBe('budget_exhausted');
    // Every agent's claim after its own report found the budget spent out.
    for (const o of outcomes) if (o.granted) expect(o.again).toBe('budget_exhausted');
    const { spent, limit } = await spentOf(budget);
    expect(spent).toBe(9_900 + granted * REPORT);
    // Granted only while unspent: the overshoot is at most what the attempts in flight reported.
    expect(granted).toBeGreaterThanOrEqual(1);
    expect(spent - limit).toBeLessThanOrEqual((granted - 1) * REPORT);
    const rows = await cluster.database.db.selectFrom('budget_spend').select('amount').where('budget_id', '=', budget).execute();
    expect(rows.reduce((sum, row) => sum + Number(row.amount), 0)).toBe(spent);
    expect(rows).toHaveLength(1 + granted);
    const exhausted = await cluster.database.db.selectFrom('events').select('id').where('type', '=', 'budget.exhausted').where('subject', '=', budget).execute();
    expect(exhausted).toHaveLength(1);
  });

  it('a budget of runs is never overshot: of 32 concurrent claims exactly the limit are granted', async () => {
    const label = `runs-${randomUUID().slice(0, 8)}`;
    const budget = await budgetOf({ applies_to: 'label', target: label, unit: 'runs', period: 'day', limit: 10 });
    await tasks(label, AGENTS);
    const workers = await agents();
    const answers = await Promise.all(workers.map((agent, i) => cluster.request('POST', '/api/v1/tasks/claim', { body: { labels: [label] }, token: agent.token, via: i % INSTANCES })));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(10);
    for (const r of answers.filter((r) => r.status !== 200)) expect(r.json<{ code: string }>().code).toBe('budget_exhausted');
    expect(await spentOf(budget)).toMatchObject({ spent: 10, limit: 10 });
  });
});
