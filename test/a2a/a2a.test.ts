import { SendMessageRequest, type StreamResponse, type Task, TaskState } from '@a2a-js/sdk';
import { type Client, ClientFactory, ClientFactoryOptions, JsonRpcTransportFactory } from '@a2a-js/sdk/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listen } from '../mcp/clients.ts';
import { startTestServer, type TestServer } from '../harness.ts';

/**
 * A2A through the official SDK's client (`ClientFactory` over JSON-RPC) against a listening Baton:
 * the card, a message becoming a Baton task, the task driven to done by an agent over REST, and
 * the result read back with GetTask and on streams. Baton's REST view is the truth throughout.
 */
let t: TestServer;
let baseUrl: string;
let outsider: { id: string; token: string };
let worker: { id: string; token: string };
let client: Client;
const PUBLIC_URL = 'http://baton.test';
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
  outsider = await t.addPrincipal({ kind: 'agent', name: 'outside-a2a-client', scopes: ['tasks:read', 'tasks:write', 'events:read'] });
  worker = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'artifacts:write', 'events:read'] });
  client = await clientFor(outsider.token);
});
afterAll(() => t.close());

/** The card names BATON_PUBLIC_URL (the harness's http://baton.test); the client reaches it at the listening port, as through a proxy. */
async function clientFor(token: string): Promise<Client> {
  const authed: typeof fetch = (input, init) =>
    fetch(String(input instanceof Request ? input.url : input).replace(PUBLIC_URL, baseUrl), { ...init, headers: { ...Object.fromEntries(new Headers(init?.headers).entries()), authorization: `Bearer ${token}` } });
  const factory = new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { transports: [new JsonRpcTransportFactory({ fetchImpl: authed })] }));
  return factory.createFromUrl(baseUrl);
}

function message(text: string, extra: Record<string, unknown> = {}): SendMessageRequest {
  return SendMessageRequest.fromJSON({ message: { messageId: crypto.randomUUID(), role: 'ROLE_USER', parts: [{ text }], ...extra } });
}

async function rest<T = Record<string, unknown>>(method: string, url: string, token: string, body?: unknown): Promise<T> {
  const response = await t.request(method, url, { token, ...(body === undefined ? {} : { body }) });
  expect(response.status, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json<T>();
}

/** Works a task as a Baton agent would over REST: claim, attach a report, hand in; a human approves. */
/** Claims, hands in and approves the task; `whileWorked` runs between the claim and the hand-in. */
async function driveToDone(taskId: string, whileWorked: () => Promise<void> = async () => undefined): Promise<void> {
  await rest('POST', `/api/v1/tasks/${taskId}/claim`, worker.token, {});
  await whileWorked();
  const report = await rest<{ id: string }>('POST', '/api/v1/artifacts', worker.token, { content: '# Report\nAll green.', content_type: 'text/markdown', task_id: taskId, name: 'report.md' });
  await rest('POST', `/api/v1/tasks/${taskId}/hand_in`, worker.token, { summary: 'Fixed the flaky test: the clock is injected now.', artifacts: [report.id] });
  await rest('POST', `/api/v1/tasks/${taskId}/review`, t.adminToken, { decision: 'approve' });
}

async function collect(stream: AsyncGenerator<StreamResponse>, seen: StreamResponse[] = []): Promise<StreamResponse[]> {
  for await (const event of stream) seen.push(event);
  return seen;
}

const statesOf = (events: StreamResponse[]) => events.flatMap((e) => (e.payload?.$case === 'statusUpdate' ? [e.payload.value.status?.state] : e.payload?.$case === 'task' ? [e.payload.value.status?.state] : []));

describe('A2A', () => {
  it('publishes an Agent Card naming the JSON-RPC interface, streaming and the bearer scheme', async () => {
    const response = await fetch(`${baseUrl}/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = (await response.json()) as Record<string, unknown>;
    expect(card).toMatchObject({
      name: 'Baton',
      supportedInterfaces: [{ url: `${PUBLIC_URL}/a2a`, protocolBinding: 'JSONRPC', protocolVersion: '1.0' }],
      capabilities: { streaming: true, pushNotifications: false },
      securitySchemes: { baton_token: { httpAuthSecurityScheme: { scheme: 'Bearer' } } },
      securityRequirements: [{ schemes: { baton_token: {} } }],
    });
    expect((await client.getAgentCard()).name).toBe('Baton');
  });

  it('refuses a request without a token with Baton\'s 401', async () => {
    const response = await fetch(`${baseUrl}/a2a`, { method: 'POST', headers: { 'content-type': 'application/json', 'a2a-version': '1.0' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'GetTask', params: { id: 'tsk_x' } }) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'unauthenticated' });
  });

  it('turns a message into a Baton task, follows it to completed, and returns the hand-in and artifacts as the result', async () => {
    const sent = (await client.sendMessage(message('Fix the flaky login test\nIt fails one run in ten on CI.'))) as Task;
    expect(sent.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(sent.id).toMatch(/^tsk_/);

    // The Baton task, as REST shows it: created by the A2A caller, through tasks_create.
    const task = await rest<{ title: string; description: string; status: string; created_by: { id: string } }>('GET', `/api/v1/tasks/${sent.id}?view=full`, t.adminToken);
    expect(task).toMatchObject({ title: 'Fix the flaky login test', description: 'It fails one run in ten on CI.', status: 'todo', created_by: { id: outsider.id } });

    const stream = client.resubscribeTask({ tenant: '', id: sent.id });
    // The stream opens with the task as it is now; then the agent works it.
    const opening = await stream.next();
    expect(opening.value?.payload?.$case).toBe('task');
    // The stream re-reads the task on each of its events: a task worked for a moment shows `working`
    // (handed in and approved at once, a re-read may already find it completed).
    const seen: StreamResponse[] = [];
    const followed = collect(stream, seen);
    await driveToDone(sent.id, () => vi.waitUntil(() => statesOf(seen).includes(TaskState.TASK_STATE_WORKING), { timeout: 30_000 }).then(() => undefined));
    const events = [opening.value as StreamResponse, ...(await followed)];
    expect(statesOf(events)[0]).toBe(TaskState.TASK_STATE_SUBMITTED);
    expect(statesOf(events).at(-1)).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(statesOf(events)).toContain(TaskState.TASK_STATE_WORKING);
    const streamedArtifacts = events.flatMap((e) => (e.payload?.$case === 'artifactUpdate' ? [e.payload.value.artifact?.artifactId] : []));
    expect(streamedArtifacts).toContain('handoff');

    const done = await client.getTask({ tenant: '', id: sent.id, historyLength: undefined });
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const summary = done.status?.message?.parts[0]?.content;
    expect(summary).toEqual({ $case: 'text', value: 'Fixed the flaky test: the clock is injected now.' });
    const [handoff, report] = done.artifacts;
    expect(handoff?.parts[0]?.content).toEqual({ $case: 'text', value: 'Fixed the flaky test: the clock is injected now.' });
    const url = report?.parts[0]?.content;
    expect(url?.$case).toBe('url');
    // The artifact's bytes, with the same token.
    const bytes = await fetch(String(url?.value).replace(PUBLIC_URL, baseUrl), { headers: { authorization: `Bearer ${outsider.token}` } });
    expect(await bytes.text()).toBe('# Report\nAll green.');
  });

  it('streams a message\'s task from submitted, and CancelTask cancels it through Baton\'s state machine', async () => {
    const stream = client.sendMessageStream(message('Migrate the billing cron'));
    const first = await stream.next();
    expect(first.value?.payload?.$case).toBe('task');
    const created = first.value?.payload?.$case === 'task' ? first.value.payload.value : undefined;
    expect(created?.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED);
    const rest_ = collect(stream);

    const canceled = await client.cancelTask({ tenant: '', id: created?.id ?? '', metadata: undefined });
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    expect(statesOf(await rest_).at(-1)).toBe(TaskState.TASK_STATE_CANCELED);
    expect((await rest<{ status: string }>('GET', `/api/v1/tasks/${created?.id}`, t.adminToken)).status).toBe('cancelled');
    await expect(client.cancelTask({ tenant: '', id: created?.id ?? '', metadata: undefined })).rejects.toThrow(/cancelled/);
  });

  it('answers an unknown task with TaskNotFound, and a retried message (same messageId) creates its task once', async () => {
    await expect(client.getTask({ tenant: '', id: 'tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV', historyLength: undefined })).rejects.toThrow(/tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV/);
    const request = message('Rotate the signing keys');
    const once = (await client.sendMessage(request)) as Task;
    const again = (await client.sendMessage(request)) as Task;
    expect(again.id).toBe(once.id);
  });

  it('answers a data part nested too deeply to read with a malformed request, not an internal error', async () => {
    const depth = 100_000;
    const deep = `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    const res = await t.app.inject({
      method: 'POST',
      url: '/a2a',
      headers: { authorization: `Bearer ${outsider.token}`, 'content-type': 'application/json', 'a2a-version': '1.0' },
      payload: `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"deep","role":"ROLE_USER","parts":[{"text":"Deep"},{"data":${deep}}]}}}`,
    });
    const body = JSON.parse(res.body) as { error?: { code: number; message: string } };
    expect(body.error?.code, res.body.slice(0, 300)).toBe(-32602);
    expect(body.error?.message).toMatch(/nested too deeply/);
  });
});
