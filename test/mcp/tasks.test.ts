/**
 * MCP Tasks (spec/mcp.md § MCP Tasks): the 2026-07-28 Tasks extension, driven by its official
 * requester (`@modelcontextprotocol/ext-tasks`) over a real SDK client and HTTP. Polls are made one
 * at a time by the test (the controller's `snapshot`), so nothing here waits on a timer.
 */
import type { Client } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, type TaskController, type TaskEnabledSession, type TaskView, type ToolExecution } from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prune } from '../../src/workers/prune.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { pollUntil } from '../leases/instances.ts';
import { connectV2, listen, outputOf } from './clients.ts';

const TASKS = 'io.modelcontextprotocol/tasks';
const AGENT_SCOPES = ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] as const;

let t: TestServer;
let baseUrl: string;
let now = new Date('2026-11-29T12:00:00Z');
beforeAll(async () => {
  t = await startTestServer({}, { clock: { now: () => now } });
  baseUrl = await listen(t);
});
afterAll(() => t.close());

/** One JSON-RPC request straight to /mcp, as the Tasks requester's host sends the extension's traffic. */
async function post(token: string, request: Record<string, unknown>): Promise<Record<string, unknown>> {
  // The standard headers: Mcp-Name is the tool's name on tools/call, the task's id on tasks/*.
  const params = request['params'] as { taskId?: string; name?: string } | undefined;
  const name = params?.taskId ?? params?.name;
  const response = await fetch(`${baseUrl}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': String(request['method']),
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...request }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('text/event-stream') ? (/^data: (.*)$/m.exec(text)?.[1] ?? '') : text;
  return JSON.parse(json) as Record<string, unknown>;
}

interface Host {
  readonly client: Client;
  readonly session: TaskEnabledSession;
}

/** An agent's host that takes tasks: the SDK client, and the extension's session over it. */
async function tasksHost(token: string): Promise<Host> {
  const client = await connectV2(baseUrl, token, 'modern');
  const session = createTaskSessionFromClient(client, {
    endpointId: `baton-test-${token.slice(-6)}`,
    rawDispatch: async (request) => {
      const answer = await post(token, request as Record<string, unknown>);
      return 'error' in answer ? { kind: 'error', error: answer['error'] as never } : { kind: 'result', result: answer['result'] as never };
    },
    v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo: { name: 'baton-test-tasks', version: '1.0.0' }, clientCapabilities: {} },
  });
  return { client, session };
}

async function closeHost(host: Host): Promise<void> {
  await host.session.close();
  await host.client.close();
}

/** The controller of a call the server answered with a task handle; the test polls it itself (the execution stops driving). */
async function followed(host: Host, execution: ToolExecution<unknown>): Promise<TaskController> {
  if (execution.kind !== 'task') throw new Error(`The call answered at once (${execution.kind}), not with a task.`);
  await execution.detach();
  return host.session.task(execution.handle.taskId);
}

function structured(view: TaskView): Record<string, unknown> {
  return (view.raw['result'] as { structuredContent: Record<string, unknown> }).structuredContent;
}

describe('MCP Tasks', () => {
  it('is advertised on the 2026-07-28 revision only', async () => {
    const modern = await connectV2(baseUrl, t.adminToken, 'modern');
    expect(modern.getServerCapabilities()?.extensions).toEqual({ [TASKS]: {} });
    const legacy = await connectV2(baseUrl, t.adminToken, 'legacy');
    expect(legacy.getServerCapabilities()).not.toHaveProperty('extensions');
    await modern.close();
    await legacy.close();
  });

  it('an ask not yet answered is a task; a poll after the answer completes it with the answered ask', async () => {
    const dana = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review'], name: 'dana' });
    const agent = await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES });
    const host = await tasksHost(agent.token);
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'Pick a region' }, token: agent.token })).json<{ id: string }>();
    const ask = (await t.request('POST', `/api/v1/tasks/${task.id}/asks`, { token: agent.token, body: { question: 'Which region?', options: [{ label: 'eu' }, { label: 'us' }], to: 'dana', timeout_s: 600, default: { option: 'eu' } } })).json<{ id: string }>();

    const controller = await followed(host, await host.session.callTool('asks_get', { id: ask.id, wait_s: 60 }));
    expect(controller.taskId).toMatch(/^mct_/);
    const working = await controller.snapshot();
    expect(working).toMatchObject({ status: 'working', ttl: 24 * 3600 * 1000 });
    expect(working.raw['pollIntervalMs']).toBe(2000);

    const answered = await t.request('POST', `/api/v1/asks/${ask.id}/answer`, { token: dana.token, body: { option: 'us' } });
    expect(answered.status).toBe(200);

    const done = await controller.snapshot();
    expect(done.status).toBe('completed');
    expect(structured(done)).toMatchObject({ id: ask.id, status: 'answered', answer: { option: 'us' } });
    // Ended is ended: the next poll answers the same, and the extension's own result call reads it.
    expect(structured(await controller.snapshot())).toEqual(structured(done));
    const outcome = await controller.result();
    expect(outcome.status).toBe('completed');
    await closeHost(host);
  });

  it('a wait that finds something answers at once; one that does not is a task whose polls miss nothing that arrives after the call', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES });
    const host = await tasksHost(agent.token);
    const plain = await connectV2(baseUrl, agent.token, 'modern');
    const start = outputOf<{ cursor: string }>(await plain.callTool({ name: 'wait', arguments: { timeout_s: 0, work: 'no' } }));

    const controller = await followed(host, await host.session.callTool('wait', { after: start.cursor, timeout_s: 30, work: 'no' }));
    expect((await controller.snapshot()).status).toBe('working');

    // Something for the agent: a human assigns it a task after the call was made.
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'For you' } })).json<{ id: string }>();
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: agent.id } })).status).toBe(200);
    // A wait reads settled events only: on the shared test PostgreSQL another database's open
    // transaction may hold the assignment back for a moment (src/store/events.ts, SETTLED).
    const done = await pollUntil(async () => {
      const polled = await controller.snapshot();
      return polled.status === 'working' ? undefined : polled;
    }, 30_000, 'the wait completed by the assignment');
    expect(done.status).toBe('completed');
    const output = structured(done) as { items: { type: string; task_id: string }[]; timed_out: boolean; cursor: string };
    expect(output.items).toEqual([expect.objectContaining({ type: 'task.assigned', task_id: task.id })]);
    expect(output.timed_out).toBe(false);

    // Something already there: the same call answers with it, not with a handle.
    const immediate = await host.session.callTool('wait', { after: start.cursor, timeout_s: 30, work: 'no' });
    expect(immediate.kind).toBe('immediate');
    const settled = await immediate.settle();
    expect(settled.outcome.status).toBe('completed');
    await plain.close();
    await closeHost(host);
  });

  it("completes with the wait's own answer once its seconds are up on the server's clock, and can be cancelled before", async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES });
    const host = await tasksHost(agent.token);
    const a = await followed(host, await host.session.callTool('wait', { timeout_s: 20, work: 'no' }));
    const b = await followed(host, await host.session.callTool('wait', { timeout_s: 20, work: 'no' }));
    expect((await a.snapshot()).status).toBe('working');

    await host.session.cancelTask(b.taskId);
    expect((await b.snapshot()).status).toBe('cancelled');

    now = new Date(now.getTime() + 21_000);
    const over = await a.snapshot();
    expect(over.status).toBe('completed');
    expect(structured(over)).toMatchObject({ items: [], timed_out: true });
    // Cancelling what has ended leaves it as it ended.
    await host.session.cancelTask(a.taskId);
    expect((await a.snapshot()).status).toBe('completed');
    await closeHost(host);
  });

  it("a gated write's pending approval is a task that completes with the operation's own result once a human approves, or with the approval once denied", async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES });
    const host = await tasksHost(agent.token);
    const make = async (title: string) => (await t.request('POST', '/api/v1/tasks', { body: { title }, token: agent.token })).json<{ id: string }>();
    const [kept, removed] = [await make('keep me'), await make('delete me')];

    const yes = await followed(host, await host.session.callTool('tasks_delete', { id: removed.id }));
    const no = await followed(host, await host.session.callTool('tasks_delete', { id: kept.id }));
    const pending = await yes.snapshot();
    expect(pending).toMatchObject({ status: 'working' });
    expect(pending.raw['pollIntervalMs']).toBe(5000);

    const approvals = (await t.request('GET', '/api/v1/approvals?status=pending')).json<{ data: { id: string; input: { id: string } }[] }>().data;
    const idFor = (taskId: string) => approvals.find((a) => a.input.id === taskId)?.id ?? '';
    expect((await t.request('POST', `/api/v1/approvals/${idFor(removed.id)}/approve`, { body: {} })).status).toBe(200);
    expect((await t.request('POST', `/api/v1/approvals/${idFor(kept.id)}/deny`, { body: { reason: 'still needed' } })).status).toBe(200);

    const ran = await yes.snapshot();
    expect(ran.status).toBe('completed');
    expect(structured(ran)).toMatchObject({ id: removed.id, title: 'delete me' });
    expect((await t.request('GET', `/api/v1/tasks/${removed.id}`)).status).toBe(404);
    const refused = await no.snapshot();
    expect(refused.status).toBe('completed');
    expect(structured(refused)).toMatchObject({ id: idFor(kept.id), status: 'denied', reason: 'still needed' });
    await closeHost(host);
  });

  it('is unknown a day after it was made, and the maintenance pass deletes it', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES });
    const host = await tasksHost(agent.token);
    const task = await followed(host, await host.session.callTool('wait', { timeout_s: 5, work: 'no' }));
    const clock = { now: () => now };
    expect((await prune(t.database.db, { clock, rateWindowS: 60 })).mcp_tasks).toBe(0);
    now = new Date(now.getTime() + 24 * 3600 * 1000);
    await expect(task.snapshot()).rejects.toThrow(/Unknown task/);
    expect((await prune(t.database.db, { clock, rateWindowS: 60 })).mcp_tasks).toBeGreaterThanOrEqual(1);
    const left = await t.database.db.selectFrom('mcp_tasks').select('id').where('id', '=', task.taskId).execute();
    expect(left).toEqual([]);
    await closeHost(host);
  });

  it("answers another principal's task, and an unknown one, as unknown; a host without the extension waits as before", async () => {
    const [owner, other] = [await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES }), await t.addPrincipal({ kind: 'agent', scopes: AGENT_SCOPES })];
    const host = await tasksHost(owner.token);
    const { taskId } = await followed(host, await host.session.callTool('wait', { timeout_s: 30, work: 'no' }));
    for (const token of [other.token, owner.token]) {
      const id = token === other.token ? taskId : 'mct_01ARZ3NDEKTSV4RRFFQ69G5FAV';
      const answer = await post(token, { method: 'tasks/get', params: { taskId: id, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientInfo': { name: 'x', version: '1' }, 'io.modelcontextprotocol/clientCapabilities': {} } } });
      expect(answer['error'], JSON.stringify(answer)).toMatchObject({ code: -32602, message: expect.stringMatching(/^Unknown task/) as string });
    }
    const plain = await connectV2(baseUrl, owner.token, 'modern');
    const waited = outputOf<{ timed_out: boolean }>(await plain.callTool({ name: 'wait', arguments: { timeout_s: 1, work: 'no' } }));
    expect(waited.timed_out).toBe(true);
    await plain.close();
    await closeHost(host);
  });
});
