import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { MEMBER_SCOPES } from '../../src/domain/scopes.ts';
import { expectProblem } from '../rest/fixtures.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';

/** Budgets (issue 41 §2, spec/runs.md "Budgets") over REST, with the clock moved by hand. */
interface Budget {
  id: string;
  version: number;
  limit: number;
  spent: number;
  state: string;
  window_start: string;
  resets_at: string | null;
}
interface Exhausted {
  budget: { id: string; spent: number; limit: number; resets_at: string | null };
  raised_by: string;
}

let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
let t: TestServer;
let lead: { id: string; token: string };
let member: { id: string; token: string };
beforeAll(async () => {
  t = await startTestServer({}, { clock });
  lead = await t.addPrincipal({ kind: 'human' });
  member = await t.addPrincipal({ kind: 'human', scopes: MEMBER_SCOPES });
});
afterAll(() => t.close());

const agentOf = () => t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
const task = async (labels: string[] = []) => (await t.request('POST', '/api/v1/tasks', { body: { title: `Budget ${randomUUID()}`, labels } })).json<{ id: string }>().id;
const setBudget = async (body: Record<string, unknown>) => {
  const res = await t.request('POST', '/api/v1/budgets', { body: { name: 'test budget', ...body }, token: lead.token });
  expect(res.status, res.body).toBe(201);
  return res.json<Budget>();
};
const readBudget = async (id: string) => (await t.request('GET', `/api/v1/budgets/${id}`)).json<Budget>();
const claim = (id: string, token: string) => t.request('POST', `/api/v1/tasks/${id}/claim`, { body: {}, token });
// On a shared PostgreSQL another test's open transaction may hold the newest events back from cursors for a while.
const events = async (type: string, subject: string) => {
  await eventsSettled(t);
  return (await t.request('GET', `/api/v1/events?types=${type}&limit=100`)).json<{ data: { subject: string; data: Record<string, unknown> }[] }>().data.filter((e) => e.subject === subject);
};

describe('budgets', () => {
  it("an agent's usage reaches its budget, which refuses its next claim; a lead raises it and work resumes", async () => {
    const agent = await agentOf();
    const budget = await setBudget({ applies_to: 'agent', target: agent.id, unit: 'cost', period: 'day', limit: 1 });
    expect(budget).toMatchObject({ spent: 0, limit: 1, state: 'ok', window_start: '2026-11-28T00:00:00.000Z', resets_at: '2026-11-29T00:00:00.000Z' });
    const [first, second] = [await task(), await task()];
    const lease = (await claim(first, agent.token)).json<{ lease: { id: string } }>().lease.id;
    const beat = (usage?: Record<string, unknown>) => t.request('POST', `/api/v1/leases/${lease}/heartbeat`, { body: usage ? { usage } : {}, token: agent.token });

    expect((await beat({ cost: 0.5 })).json<{ budget?: unknown }>().budget).toBeUndefined();
    const key = randomUUID();
    const report = () => t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { cost: 0.35, input_tokens: 10 }, key, token: agent.token });
    expect((await report()).status).toBe(200);
    const replay = await report();
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(await readBudget(budget.id)).toMatchObject({ spent: 0.85, state: 'warned' });
    expect(await events('budget.warning', budget.id)).toHaveLength(1);

    // The report that passes the limit is taken; the heartbeat says so, and the run goes on.
    const over = await beat({ cost: 0.2 });
    expect(over.status, over.body).toBe(200);
    expect(over.json<{ budget: unknown }>().budget).toMatchObject({ exhausted: true, id: budget.id, spent: 1.05, limit: 1, resets_at: '2026-11-29T00:00:00.000Z' });
    expect((await beat()).json<{ budget: unknown }>().budget).toMatchObject({ exhausted: true });
    expect((await t.request('POST', `/api/v1/tasks/${first}/hand_in`, { body: { summary: 'done within reason' }, token: agent.token })).status).toBe(200);
    expect(await events('budget.exhausted', budget.id)).toHaveLength(1);
    expect(await events('budget.warning', budget.id)).toHaveLength(1);

    const refused = expectProblem(await claim(second, agent.token), 409, 'budget_exhausted') as unknown as Exhausted & { hint: string };
    expect(refused.budget).toMatchObject({ id: budget.id, spent: 1.05, limit: 1, resets_at: '2026-11-29T00:00:00.000Z' });
    expect(refused.raised_by).toMatch(/admin or owner/);
    expect(refused.hint).toContain(`/api/v1/budgets/${budget.id}`);
    expectProblem(await t.request('POST', '/api/v1/tasks/claim', { body: {}, token: agent.token }), 409, 'budget_exhausted');
    expect((await t.request('GET', `/api/v1/tasks/${second}`)).json<{ status: string }>().status).toBe('todo');

    // A member may not raise it; the lead (admin) does, and the refused claim goes through.
    expectProblem(await t.request('PATCH', `/api/v1/budgets/${budget.id}`, { body: { limit: 2 }, token: member.token }), 403, 'forbidden_scope');
    expectProblem(await t.request('PATCH', `/api/v1/budgets/${budget.id}`, { body: { limit: 2 }, token: agent.token }), 403, 'forbidden_scope');
    const raised = await t.request('PATCH', `/api/v1/budgets/${budget.id}`, { body: { limit: 2 }, token: lead.token });
    expect(raised.json<Budget>()).toMatchObject({ limit: 2, spent: 1.05, state: 'ok' });
    expect((await events('budget.updated', budget.id))[0]?.data).toMatchObject({ changes: { limit: { from: 1, to: 2 } } });
    expect((await claim(second, agent.token)).status).toBe(200);
  });

  it('a day budget starts over at midnight UTC, and its warning comes once per window', async () => {
    const agent = await agentOf();
    const budget = await setBudget({ applies_to: 'agent', target: agent.id, unit: 'tokens', period: 'day', limit: 100 });
    const spend = async () => {
      const lease = (await claim(await task(), agent.token)).json<{ lease: { id: string } }>().lease.id;
      expect((await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 60, output_tokens: 40 }, token: agent.token })).status).toBe(200);
      await t.request('POST', `/api/v1/leases/${lease}/release`, { body: {}, token: agent.token });
    };
    await spend();
    expectProblem(await claim(await task(), agent.token), 409, 'budget_exhausted');
    at = new Date('2026-11-29T00:00:00.000Z');
    expect(await readBudget(budget.id)).toMatchObject({ spent: 0, state: 'ok', window_start: '2026-11-29T00:00:00.000Z', resets_at: '2026-11-30T00:00:00.000Z' });
    await spend();
    expect(await events('budget.warning', budget.id)).toHaveLength(2);
    expect(await events('budget.exhausted', budget.id)).toHaveLength(2);
  });

  it('claim_next skips tasks on an exhausted label budget while another is claimable, and says which budget when none is', async () => {
    const agent = await agentOf();
    const label = `hot-${randomUUID().slice(0, 8)}`;
    const budget = await setBudget({ applies_to: 'label', target: label, unit: 'runs', period: 'week', limit: 1 });
    const hot = [await task([label, 'queue-a']), await task([label, 'queue-a'])];
    expect((await claim(hot[0] ?? '', agent.token)).status).toBe(200);
    expect(await readBudget(budget.id)).toMatchObject({ spent: 1, state: 'exhausted', window_start: '2026-11-23T00:00:00.000Z' });
    const cold = await task(['queue-a']);
    const next = await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['queue-a'] }, token: agent.token });
    expect(next.json<{ claims: { task: { id: string } }[] }>().claims.map((c) => c.task.id)).toEqual([cold]);
    const none = expectProblem(await t.request('POST', '/api/v1/tasks/claim', { body: { labels: ['queue-a'] }, token: agent.token }), 409, 'budget_exhausted') as unknown as Exhausted;
    expect(none.budget).toMatchObject({ id: budget.id, spent: 1, limit: 1 });
  });

  it("a task's budget counts the runs it had, and a deleted budget refuses nothing", async () => {
    const agent = await agentOf();
    const id = await task();
    const lease = (await claim(id, agent.token)).json<{ lease: { id: string } }>().lease.id;
    await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { cost: 3 }, token: agent.token });
    await t.request('POST', `/api/v1/leases/${lease}/release`, { body: {}, token: agent.token });
    const budget = await setBudget({ applies_to: 'task', target: id, unit: 'cost', limit: 2.5 });
    expect(budget).toMatchObject({ spent: 3, state: 'exhausted', resets_at: null });
    expectProblem(await claim(id, agent.token), 409, 'budget_exhausted');
    expect((await t.request('DELETE', `/api/v1/budgets/${budget.id}`, { token: lead.token })).status).toBe(200);
    expect((await claim(id, agent.token)).status).toBe(200);
  });

  it("a task's max_cost is a task budget: it refuses the next claim, tells the running attempt, and a lead raises it", async () => {
    const agent = await agentOf();
    const created = await t.request('POST', '/api/v1/tasks', { body: { title: `Capped ${randomUUID()}`, max_cost: 1, max_cost_currency: 'EUR' }, token: agent.token });
    expect(created.status, created.body).toBe(201);
    const id = created.json<{ id: string }>().id;
    const full = async () => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<{ max_cost?: number; max_cost_currency?: string; version: number }>();
    expect(await full()).toMatchObject({ max_cost: 1, max_cost_currency: 'EUR', version: 1 });
    expect(await (async () => (await t.request('GET', `/api/v1/tasks/${await task()}?view=full`)).json<Record<string, unknown>>())()).not.toHaveProperty('max_cost');
    const [cap] = (await t.request('GET', `/api/v1/budgets?applies_to=task&target=${id}`)).json<{ data: (Budget & { name: string; currency: string })[] }>().data;
    expect(cap).toMatchObject({ name: 'max_cost', currency: 'EUR', limit: 1, state: 'ok' });

    const lease = (await claim(id, agent.token)).json<{ lease: { id: string } }>().lease.id;
    const beat = await t.request('POST', `/api/v1/leases/${lease}/heartbeat`, { body: { usage: { cost: 1.2, currency: 'EUR' } }, token: agent.token });
    expect(beat.json<{ budget?: { id: string; name: string } }>().budget).toMatchObject({ exhausted: true, id: cap?.id, name: 'max_cost' });
    expect((await t.request('POST', `/api/v1/leases/${lease}/release`, { body: {}, token: agent.token })).status).toBe(200);
    expect(expectProblem(await claim(id, agent.token), 409, 'budget_exhausted')).toMatchObject({ budget: { id: cap?.id, name: 'max_cost', applies_to: 'task', target: id, spent: 1.2, limit: 1 } });

    // The agent may lower it, not raise or remove it; a member neither; a lead may, through the task or the budget.
    expect((await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { max_cost: 0.9 }, token: agent.token })).status).toBe(200);
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { max_cost: 5 }, token: agent.token }), 403, 'human_required');
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { max_cost: null }, token: member.token }), 403, 'forbidden_scope');
    const raised = await t.request('PATCH', `/api/v1/tasks/${id}`, { body: { max_cost: 2 }, token: lead.token });
    expect(raised.status, raised.body).toBe(200);
    expect((await readBudget(cap?.id ?? '')).limit).toBe(2);
    expect((await claim(id, agent.token)).status).toBe(200);
    const updated = await t.request('PATCH', `/api/v1/budgets/${cap?.id}`, { body: { limit: 3 }, token: lead.token });
    expect(updated.status, updated.body).toBe(200);
    expect(await full()).toMatchObject({ max_cost: 3, max_cost_currency: 'EUR' });
    const changes = (await events('task.updated', id)).map((e) => e.data.changes);
    expect(changes).toEqual([{ max_cost: { from: 1, to: 0.9 } }, { max_cost: { from: 0.9, to: 2 } }, { max_cost: { from: 2, to: 3 } }]);
    expect((await t.request('DELETE', `/api/v1/budgets/${cap?.id}`, { token: lead.token })).status).toBe(200);
    expect(await full()).not.toHaveProperty('max_cost');
    expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'x', max_cost: 2e6 } }), 400, 'validation_failed');
    expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'x', max_cost_currency: 'EUR' } }), 400, 'validation_failed');
  });

  it('refuses a currency on a count, and an agent that does not exist', async () => {
    expectProblem(await t.request('POST', '/api/v1/budgets', { body: { name: 'x', applies_to: 'label', target: 'x', unit: 'runs', currency: 'USD', limit: 1 }, token: lead.token }), 400, 'validation_failed');
    expectProblem(await t.request('POST', '/api/v1/budgets', { body: { name: 'x', applies_to: 'agent', target: 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV', unit: 'runs', limit: 1 }, token: lead.token }), 422, 'unknown_principal');
  });
});

describe('a workspace budget', () => {
  /** A new workspace (made by the bootstrap owner), its owner's token and an agent of its own. */
  const workspace = async (name: string) => {
    const made = await t.request('POST', '/api/v1/workspaces', { body: { name: `${name} ${randomUUID().slice(0, 8)}` } });
    expect(made.status, made.body).toBe(201);
    const { workspace: ws, token: owner } = made.json<{ workspace: { id: string }; token: string }>();
    const agent = (await t.request('POST', '/api/v1/agents', { token: owner, body: { name: 'worker', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] } })).json<{ id: string }>();
    const issued = await t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { token: owner, body: { machine: 'ci' } });
    expect(issued.status, issued.body).toBe(201);
    const newTask = async () => (await t.request('POST', '/api/v1/tasks', { token: owner, body: { title: `Work ${randomUUID()}` } })).json<{ id: string }>().id;
    return { id: ws.id, owner, agent: issued.json<{ token: string }>().token, newTask };
  };

  it("counts every run of its workspace and only those: exhausted, it refuses that workspace's claims, not another's; raised, work resumes", async () => {
    const [a, b] = [await workspace('Spend A'), await workspace('Spend B')];
    const make = (ws: typeof a, body: Record<string, unknown>) => t.request('POST', '/api/v1/budgets', { token: ws.owner, body: { name: 'all runs', applies_to: 'workspace', unit: 'cost', ...body } });
    // Its target is its own workspace: left out, or named; another's is refused.
    const created = await make(a, { limit: 1 });
    expect(created.status, created.body).toBe(201);
    const budget = created.json<Budget & { applies_to: string; target: string; period: string }>();
    expect(budget).toMatchObject({ applies_to: 'workspace', target: a.id, period: 'month', spent: 0, state: 'ok' });
    const theirs = await make(b, { target: b.id, limit: 1 });
    expect(theirs.json()).toMatchObject({ applies_to: 'workspace', target: b.id });
    expectProblem(await make(b, { target: a.id, limit: 1 }), 400, 'validation_failed');
    expectProblem(await t.request('POST', '/api/v1/budgets', { token: a.owner, body: { name: 'x', applies_to: 'label', unit: 'runs', limit: 1 } }), 400, 'validation_failed');

    // Two runs of workspace A spend from it; B's run spends from B's only.
    const spend = async (ws: typeof a, cost: number) => {
      const leased = await claim(await ws.newTask(), ws.agent);
      expect(leased.status, leased.body).toBe(200);
      const lease = leased.json<{ lease: { id: string } }>().lease.id;
      return t.request('POST', `/api/v1/leases/${lease}/heartbeat`, { body: { usage: { cost } }, token: ws.agent });
    };
    await spend(a, 0.5);
    await spend(b, 0.3);
    const read = (ws: typeof a, id: string) => t.request('GET', `/api/v1/budgets/${id}`, { token: ws.owner });
    expect((await read(a, budget.id)).json()).toMatchObject({ spent: 0.5, state: 'ok' });
    expect((await spend(a, 0.35)).json<{ budget?: unknown }>().budget).toBeUndefined();
    expect((await read(a, budget.id)).json()).toMatchObject({ spent: 0.85, state: 'warned' });
    expect((await spend(a, 0.2)).json<{ budget?: unknown }>().budget).toMatchObject({ exhausted: true, id: budget.id, applies_to: 'workspace', target: a.id });
    expect((await read(b, theirs.json<Budget>().id)).json()).toMatchObject({ spent: 0.3, state: 'ok' });
    // Neither workspace sees the other's budget.
    expectProblem(await read(b, budget.id), 404, 'not_found');
    expect((await t.request('GET', '/api/v1/budgets?applies_to=workspace', { token: b.owner })).json<{ data: { id: string }[] }>().data.map((x) => x.id)).toEqual([theirs.json<Budget>().id]);

    // Every claim in A is refused, naming the budget; B's go on.
    const waiting = await a.newTask();
    const refused = expectProblem(await claim(waiting, a.agent), 409, 'budget_exhausted') as unknown as Exhausted & { detail: string };
    expect(refused.budget).toMatchObject({ id: budget.id, applies_to: 'workspace', target: a.id, spent: 1.05, limit: 1 });
    expect(refused.detail).toContain(`workspace ${a.id}`);
    const none = expectProblem(await t.request('POST', '/api/v1/tasks/claim', { body: {}, token: a.agent }), 409, 'budget_exhausted');
    expect(none.detail).toMatch(/: nothing is claimed; it resets at /);
    expect((await claim(await b.newTask(), b.agent)).status).toBe(200);
    await eventsSettled(t);
    const seen = (await t.request('GET', '/api/v1/events?types=budget.warning,budget.exhausted&limit=100', { token: a.owner })).json<{ data: { type: string; subject: string }[] }>().data;
    expect(seen.filter((e) => e.subject === budget.id).map((e) => e.type)).toEqual(['budget.warning', 'budget.exhausted']);

    // Raised, the refused claim goes through.
    const raised = await t.request('PATCH', `/api/v1/budgets/${budget.id}`, { token: a.owner, body: { limit: 2 } });
    expect(raised.json<Budget>()).toMatchObject({ limit: 2, spent: 1.05, state: 'ok' });
    expect((await claim(waiting, a.agent)).status).toBe(200);
  });
});
