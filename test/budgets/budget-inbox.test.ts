import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { MEMBER_SCOPES, type Scope } from '../../src/domain/scopes.ts';
import { graphql } from '../graphql/client.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';

/**
 * A budget at 80 % and 100 % in the inbox of who may raise it (issue 41 §2, spec/runs.md "Budgets"),
 * over REST: once per window and threshold, however many reports cross the line together.
 */
interface Item {
  id: string;
  kind: string;
  task_id: string;
  ref_id: string;
  by: string;
  excerpt: string;
  state: string;
}

let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({}, { clock });
});
afterAll(() => t.close());

const WORKER_SCOPES: Scope[] = ['tasks:read', 'tasks:write', 'tasks:claim'];
/** The budget's items in `token`'s inbox (the bootstrap admin's when undefined), every state, newest first. */
const itemsOf = async (token: string | undefined, budgetId: string) => {
  const res = await t.request('GET', '/api/v1/inbox?kind=budget&state=unread,read,done&limit=100', { token });
  expect(res.status, res.body).toBe(200);
  return res.json<{ data: Item[] }>().data.filter((i) => i.ref_id === budgetId);
};
const eventsOf = async (token: string, budgetId: string) => {
  await eventsSettled(t);
  const res = await t.request('GET', '/api/v1/events?types=budget.warning,budget.exhausted&limit=100', { token });
  return res.json<{ data: { type: string; subject: string }[] }>().data.filter((e) => e.subject === budgetId).map((e) => e.type);
};

describe('budget inbox items', () => {
  it("a workspace budget at 80 % is one item for each of its admins and owner, not its members, however many agents' reports cross together; 100 % supersedes it", async () => {
    const made = await t.request('POST', '/api/v1/workspaces', { body: { name: `Spend ${randomUUID().slice(0, 8)}` } });
    expect(made.status, made.body).toBe(201);
    const { workspace, token: owner } = made.json<{ workspace: { id: string }; token: string }>();
    const principal = async (body: Record<string, unknown>) => {
      const created = await t.request('POST', '/api/v1/agents', { token: owner, body: { name: `p-${randomUUID().slice(0, 8)}`, ...body } });
      expect(created.status, created.body).toBe(201);
      const id = created.json<{ id: string }>().id;
      const issued = await t.request('POST', `/api/v1/agents/${id}/tokens`, { token: owner, body: { machine: 'laptop' } });
      expect(issued.status, issued.body).toBe(201);
      return { id, token: issued.json<{ token: string }>().token };
    };
    const admin = await principal({ kind: 'human', role: 'admin', email: `admin-${randomUUID().slice(0, 8)}@example.test` });
    const member = await principal({ kind: 'human', role: 'member' });
    const agents = await Promise.all(Array.from({ length: 8 }, () => principal({ scopes: WORKER_SCOPES })));
    const budget = await t.request('POST', '/api/v1/budgets', { token: owner, body: { name: 'all runs', applies_to: 'workspace', unit: 'cost', limit: 1 } });
    expect(budget.status, budget.body).toBe(201);
    const { id, resets_at } = budget.json<{ id: string; resets_at: string }>();

    const leases = await Promise.all(
      agents.map(async (agent) => {
        const task = (await t.request('POST', '/api/v1/tasks', { token: owner, body: { title: `Work ${randomUUID()}` } })).json<{ id: string }>().id;
        const claimed = await t.request('POST', `/api/v1/tasks/${task}/claim`, { body: {}, token: agent.token });
        expect(claimed.status, claimed.body).toBe(200);
        return { agent, task, lease: claimed.json<{ lease: { id: string } }>().lease.id };
      }),
    );
    const reportAll = (cost: number) =>
      Promise.all(
        leases.map(async ({ agent, lease }) => {
          const res = await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { cost }, token: agent.token });
          expect(res.status, res.body).toBe(200);
        }),
      );
    const reportOne = async (cost: number) => {
      const { agent, lease } = leases[0] ?? { agent: admin, lease: '' };
      expect((await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { cost }, token: agent.token })).status).toBe(200);
    };
    // Eight reports at once take it from 0 to 0.88 USD, then one more to 0.89. Reports that cross
    // together each read what was committed before them: the crossing is filed by whichever first
    // finds the window past 80 %, the one that crossed or (on PostgreSQL, at worst) the next.
    await reportAll(0.11);
    await reportOne(0.01);
    expect(await eventsOf(owner, id)).toEqual(['budget.warning']);
    const [warning, ...more] = await itemsOf(admin.token, id);
    expect(more).toEqual([]);
    expect(warning).toMatchObject({ kind: 'budget', state: 'unread' });
    expect(leases.map((l) => [l.task, l.agent.id])).toContainEqual([warning?.task_id, warning?.by]);
    // Which report filed it depends on the race: at 80 % to 89 %.
    expect(warning?.excerpt).toMatch(new RegExp(`^Budget "all runs" \\(workspace ${workspace.id}\\) is at 8\\d %: 0\\.8\\d USD of 1 USD spent; it resets at ${resets_at}\\.$`));
    expect(await itemsOf(owner, id)).toHaveLength(1);
    expect(await itemsOf(member.token, id)).toEqual([]);
    for (const { agent } of leases) expect(await itemsOf(agent.token, id)).toEqual([]);
    // The admin has an address: emailed at once (not in the digest), and posted to chat.
    const outbox = (await t.request('GET', `/api/v1/notifications?principal_id=${admin.id}`, { token: owner })).json<{ data: { inbox_item_id: string; channel: string; digest: boolean }[] }>().data;
    expect(outbox.filter((n) => n.inbox_item_id === warning?.id).map((n) => [n.channel, n.digest]).sort()).toEqual([['chat', false], ['email', false]]);

    // Eight more at once take it to 1.29 USD, one more to 1.30: one exhausted item, which marks the warning done.
    await reportAll(0.05);
    await reportOne(0.01);
    expect(await eventsOf(owner, id)).toEqual(['budget.warning', 'budget.exhausted']);
    const [exhausted, old] = await itemsOf(admin.token, id);
    expect(old).toMatchObject({ id: warning?.id, state: 'done' });
    expect(exhausted).toMatchObject({ kind: 'budget', state: 'unread' });
    expect(exhausted?.excerpt).toMatch(new RegExp(`^Budget "all runs" \\(workspace ${workspace.id}\\) is exhausted: [\\d.]+ USD of 1 USD spent; claims on it are refused until it is raised or resets at ${resets_at}\\.$`));
    expect((await itemsOf(owner, id)).map((i) => i.state)).toEqual(['unread', 'done']);
    expect(await itemsOf(member.token, id)).toEqual([]);
    await reportAll(0.01);
    expect(await itemsOf(admin.token, id)).toHaveLength(2);
  });

  it("an agent's budget: one item per window and threshold for each human who may raise it; a spend that crosses both files the exhaustion alone", async () => {
    const lead = await t.addPrincipal({ kind: 'human' });
    const member = await t.addPrincipal({ kind: 'human', scopes: MEMBER_SCOPES });
    const agent = await t.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const made = await t.request('POST', '/api/v1/budgets', { token: lead.token, body: { name: 'agent tokens', applies_to: 'agent', target: agent.id, unit: 'tokens', period: 'day', limit: 1000 } });
    expect(made.status, made.body).toBe(201);
    const { id } = made.json<{ id: string }>();
    const claimOne = async () => {
      const task = (await t.request('POST', '/api/v1/tasks', { body: { title: `Run ${randomUUID()}` } })).json<{ id: string }>().id;
      const claimed = await t.request('POST', `/api/v1/tasks/${task}/claim`, { body: {}, token: agent.token });
      expect(claimed.status, claimed.body).toBe(200);
      return { task, lease: claimed.json<{ lease: { id: string } }>().lease.id };
    };
    const report = (lease: string, tokens: number) => t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: tokens }, token: agent.token });
    // Four runs of the agent report at once, 840 of 1,000 tokens, then one more: 850.
    const runs = [await claimOne(), await claimOne(), await claimOne(), await claimOne()];
    for (const res of await Promise.all(runs.map((r) => report(r.lease, 210)))) expect(res.status, res.body).toBe(200);
    expect((await report(runs[1]?.lease ?? '', 10)).status).toBe(200);
    const [warning, ...more] = await itemsOf(lead.token, id);
    expect(more).toEqual([]);
    expect(warning).toMatchObject({ kind: 'budget', by: agent.id, state: 'unread' });
    expect(warning?.excerpt).toMatch(new RegExp(`^Budget "agent tokens" \\(agent ${agent.id}\\) is at 8[45] %: 8[45]0 tokens of 1000 tokens spent; it resets at 2026-11-29T00:00:00\\.000Z\\.$`));
    expect(runs.map((r) => r.task)).toContain(warning?.task_id);
    expect(await itemsOf(member.token, id)).toEqual([]);
    expect(await itemsOf(agent.token, id)).toEqual([]);
    // The bootstrap admin (the default token) may raise it too.
    expect(await itemsOf(undefined, id)).toHaveLength(1);
    // Every interface serves it through inbox_list, GraphQL too.
    const viaGraphql = await graphql<{ inbox: { data: { kind: string; ref_id: string }[] } }>(t, 'query { inbox(kind: [budget]) { data { kind ref_id } } }', { token: lead.token });
    expect(viaGraphql.errors).toBeUndefined();
    expect(viaGraphql.data?.inbox.data).toContainEqual({ kind: 'budget', ref_id: id });

    const last = runs[0]?.lease ?? '';
    expect((await report(last, 200)).status).toBe(200);
    const [exhausted, old] = await itemsOf(lead.token, id);
    expect(exhausted).toMatchObject({ state: 'unread', task_id: runs[0]?.task, excerpt: `Budget "agent tokens" (agent ${agent.id}) is exhausted: 1050 tokens of 1000 tokens spent; claims on it are refused until it is raised or resets at 2026-11-29T00:00:00.000Z.` });
    expect(old).toMatchObject({ id: warning?.id, state: 'done' });

    // The next day's window starts over; a single report from 0 past 100 % files the exhaustion only.
    at = new Date('2026-11-29T08:00:00.000Z');
    const next = await claimOne();
    expect((await report(next.lease, 1200)).status).toBe(200);
    expect(await eventsOf(lead.token, id)).toEqual(['budget.warning', 'budget.exhausted', 'budget.warning', 'budget.exhausted']);
    const items = await itemsOf(lead.token, id);
    expect(items.map((i) => i.state)).toEqual(['unread', 'done', 'done']);
    expect(items[0]?.excerpt).toContain('is exhausted: 1200 tokens of 1000 tokens spent');
  });
});
