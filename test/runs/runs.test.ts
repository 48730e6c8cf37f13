import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../rest/fixtures.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';
import { connectV2, listen, outputOf } from '../mcp/clients.ts';

/** The run record (issue 41 §1, spec/runs.md) over REST, and a report over MCP. */
interface Run {
  id: string;
  task_id: string;
  holder: { id: string };
  outcome: string;
  started_at: string;
  ended_at: string | null;
  failure_code: string | null;
  usage: { input_tokens: number; output_tokens: number; cost: number; currency: string | null; model: string | null; tool_calls: number; reports: number };
  log_lines: number;
  log?: { seq: number; level: string; line: string }[];
}

let t: TestServer;
let agent: { id: string; token: string };
let other: { id: string; token: string };
beforeAll(async () => {
  t = await startTestServer();
  agent = await t.addPrincipal({ kind: 'agent' });
  other = await t.addPrincipal({ kind: 'agent' });
});
afterAll(() => t.close());

async function claimed(token = agent.token): Promise<{ task: string; lease: string }> {
  const task = (await t.request('POST', '/api/v1/tasks', { body: { title: `Run ${randomUUID()}` } })).json<{ id: string }>();
  const res = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token });
  expect(res.status, res.body).toBe(200);
  return { task: task.id, lease: res.json<{ lease: { id: string } }>().lease.id };
}

const readRun = async (id: string, query = '') => {
  const res = await t.request('GET', `/api/v1/runs/${id}${query}`);
  expect(res.status, res.body).toBe(200);
  return res.json<Run>();
};

describe('runs', () => {
  it('sums usage reported by increments and through heartbeats, and a replayed report is not counted twice', async () => {
    const { lease } = await claimed();
    const first = await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 1000, output_tokens: 200, cost: 0.012345, model: 'm-1', tool_calls: 3 }, token: agent.token });
    expect(first.status, first.body).toBe(200);
    const key = randomUUID();
    const report = { input_tokens: 500, cost: 0.5, currency: 'USD' };
    expect((await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: report, key, token: agent.token })).status).toBe(200);
    const replay = await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: report, key, token: agent.token });
    expect(replay.status).toBe(200);
    expect(replay.headers['idempotency-replayed']).toBe('true');
    const beat = await t.request('POST', `/api/v1/leases/${lease}/heartbeat`, { body: { usage: { output_tokens: 50, tool_calls: 1, model: 'm-2' } }, token: agent.token });
    expect(beat.status, beat.body).toBe(200);

    const run = await readRun(lease);
    expect(run.outcome).toBe('running');
    expect(run.usage).toEqual({ input_tokens: 1500, output_tokens: 250, cost: 0.512345, currency: 'USD', model: 'm-2', tool_calls: 4, reports: 3 });
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { cost: 1, currency: 'EUR' }, token: agent.token }), 409, 'conflict_state');
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 1 }, token: other.token }), 403, 'not_lease_holder');
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: -1 }, token: agent.token }), 400, 'validation_failed');
  });

  it('refuses reports on a lease the task has moved past (a stale epoch)', async () => {
    const { task, lease } = await claimed();
    expect((await t.request('POST', `/api/v1/leases/${lease}/release`, { body: {}, token: agent.token })).status).toBe(200);
    const again = await t.request('POST', `/api/v1/tasks/${task}/claim`, { body: {}, token: agent.token });
    expect(again.json<{ lease: { id: string } }>().lease.id).not.toBe(lease);
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { input_tokens: 10 }, token: agent.token }), 409, 'lease_inactive');
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/log`, { body: { lines: ['late'] }, token: agent.token }), 409, 'lease_inactive');
    const run = await readRun(lease);
    expect(run.outcome).toBe('released');
    expect(run.ended_at).not.toBeNull();
    expect(run.usage.input_tokens).toBe(0);
  });

  it('keeps a bounded log, read back by its tail', async () => {
    const { task, lease } = await claimed();
    const events = (await t.request('GET', `/api/v1/tasks/${task}/events`)).json<{ data: { type: string }[] }>().data.length;
    for (let i = 0; i < 5; i++) {
      const lines = Array.from({ length: 100 }, (_, j) => `line ${i * 100 + j + 1}`);
      const res = await t.request('POST', `/api/v1/leases/${lease}/log`, { body: { lines, ...(i === 4 ? { level: 'warn' } : {}) }, token: agent.token });
      expect(res.status, res.body).toBe(200);
      expect(res.json<{ log_lines: number }>().log_lines).toBe((i + 1) * 100);
    }
    const full = expectProblem(await t.request('POST', `/api/v1/leases/${lease}/log`, { body: { lines: ['one too many'] }, token: agent.token }), 409, 'run_log_full');
    expect(full).toMatchObject({ log_lines: 500, max_lines: 500 });
    expect(full.hint).toContain('artifact');
    expectProblem(await t.request('POST', `/api/v1/leases/${lease}/log`, { body: { lines: ['x'.repeat(2001)] }, token: agent.token }), 400, 'validation_failed');

    const run = await readRun(lease, '?log_lines=3');
    expect(run.log_lines).toBe(500);
    expect(run.log?.map((l) => [l.seq, l.level, l.line])).toEqual([
      [498, 'warn', 'line 498'],
      [499, 'warn', 'line 499'],
      [500, 'warn', 'line 500'],
    ]);
    const logged = (await t.request('GET', `/api/v1/tasks/${task}/events`)).json<{ data: { type: string }[] }>().data;
    expect(logged.length - events).toBe(5);
    // Another agent's run is absent to it, as its lease is.
    expectProblem(await t.request('GET', `/api/v1/runs/${lease}`, { token: other.token }), 404, 'not_found');
  });

  it('lists runs per task, per agent and per day', async () => {
    const { task, lease } = await claimed(other.token);
    await t.request('POST', `/api/v1/leases/${lease}/usage`, { body: { output_tokens: 7 }, token: other.token });
    const byTask = (await t.request('GET', `/api/v1/runs?task_id=${task}`)).json<{ data: Run[] }>().data;
    expect(byTask.map((r) => [r.id, r.usage.output_tokens])).toEqual([[lease, 7]]);

    const mine = (await t.request('GET', '/api/v1/runs?agent=me&limit=100', { token: other.token })).json<{ data: Run[] }>().data;
    expect(mine.map((r) => r.id)).toEqual([lease]);
    const byAgent = (await t.request('GET', `/api/v1/runs?agent=${agent.id}&limit=100`)).json<{ data: Run[] }>().data;
    expect(byAgent.length).toBeGreaterThanOrEqual(4);
    expect(byAgent.every((r) => r.holder.id === agent.id)).toBe(true);
    expect(byAgent.map((r) => r.id)).toEqual([...byAgent.map((r) => r.id)].sort().reverse());
    expectProblem(await t.request('GET', `/api/v1/runs?agent=${agent.id}`, { token: other.token }), 403, 'not_lease_holder');

    const page = (await t.request('GET', `/api/v1/runs?agent=${agent.id}&limit=2`)).json<{ data: Run[]; next_cursor: string }>();
    const next = (await t.request('GET', `/api/v1/runs?agent=${agent.id}&limit=2&cursor=${page.next_cursor}`)).json<{ data: Run[] }>().data;
    expect([...page.data, ...next].map((r) => r.id)).toEqual(byAgent.slice(0, 4).map((r) => r.id));

    const today = (await readRun(lease)).started_at.slice(0, 10);
    const day = (await t.request('GET', `/api/v1/runs?day=${today}&limit=100`)).json<{ data: Run[] }>().data;
    expect(day.length).toBe(byAgent.length + 1);
    expect((await t.request('GET', '/api/v1/runs?day=2000-01-01')).json<{ data: Run[] }>().data).toEqual([]);
  });

  it('reports usage and log lines over MCP', async () => {
    const baseUrl = await listen(t);
    const { lease } = await claimed();
    const mcp = await connectV2(baseUrl, agent.token, 'modern');
    const run = outputOf<Run>(await mcp.callTool({ name: 'runs_usage', arguments: { id: lease, input_tokens: 42, cost: 0.25 } }));
    expect(run.usage).toMatchObject({ input_tokens: 42, cost: 0.25, currency: 'USD', reports: 1 });
    expect(outputOf<{ log_lines: number }>(await mcp.callTool({ name: 'runs_log', arguments: { id: lease, lines: ['started'] } })).log_lines).toBe(1);
    await mcp.close();
  });

  it('carries a failure code: the agent\'s, its own under x-, unspecified, or cancelled; none when it did not fail', async () => {
    const release = (lease: string, body: Record<string, unknown>) => t.request('POST', `/api/v1/leases/${lease}/release`, { body, token: agent.token });
    const coded = await claimed();
    expectProblem(await release(coded.lease, { outcome: 'failed', reason: 'r', failure_code: 'bogus' }), 400, 'validation_failed');
    expectProblem(await release(coded.lease, { failure_code: 'tool_error' }), 400, 'validation_failed');
    expect((await release(coded.lease, { outcome: 'failed', reason: 'the linter crashed', failure_code: 'tool_error' })).status).toBe(200);
    expect((await readRun(coded.lease)).failure_code).toBe('tool_error');
    const task = (await t.request('GET', `/api/v1/tasks/${coded.task}?view=full`)).json<{ failures: { code: string }[] }>();
    expect(task.failures.map((f) => f.code)).toEqual(['tool_error']);
    await eventsSettled(t);
    const events = (await t.request('GET', `/api/v1/tasks/${coded.task}/events`)).json<{ data: { type: string; data: { code?: string } }[] }>().data;
    expect(events.find((e) => e.type === 'task.attempt_failed')?.data.code).toBe('tool_error');

    const own = await claimed();
    expect((await release(own.lease, { outcome: 'failed', reason: 'the sandbox ran out', failure_code: 'x-sandbox.oom' })).status).toBe(200);
    const bare = await claimed();
    expect((await release(bare.lease, { outcome: 'failed', reason: 'no idea' })).status).toBe(200);
    const plain = await claimed();
    expect((await release(plain.lease, {})).status).toBe(200);
    const cancelled = await claimed();
    const cancel = await t.request('PATCH', `/api/v1/tasks/${cancelled.task}`, { body: { status: 'cancelled' } });
    expect(cancel.status, cancel.body).toBe(200);
    const codes = await Promise.all([own, bare, plain, cancelled].map(async (c) => (await readRun(c.lease)).failure_code));
    expect(codes).toEqual(['x-sandbox.oom', 'unspecified', null, 'cancelled']);
  });
});

