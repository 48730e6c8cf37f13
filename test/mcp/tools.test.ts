import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { isCallable } from '../../src/operations/define-operation.ts';
import { eventsSettled } from '../leases/instances.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema as V1ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectEliciting, connectV1, connectV2, listen, outputOf, problemOf, type ToolResult } from './clients.ts';

let t: TestServer;
let baseUrl: string;
let modern: Client;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
  // Every tool set: a human's default lists work and tasks only (test/agent/budgets.test.ts).
  modern = await connectV2(baseUrl, t.adminToken, 'modern', 'toolsets=all');
});
afterAll(async () => {
  await modern.close();
  await t.close();
});

const KEY = 'baton/idempotency_key';

describe('tools/list', () => {
  it('lists one tool per registry operation that answers once (streams are not tools), with schemas and annotations derived from it', async () => {
    const { tools } = await modern.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(operations.filter(isCallable).map((op) => op.name).sort());
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    // Only the hints that differ from MCP's defaults (readOnly false, destructive true, idempotent false, openWorld true) are listed.
    expect(byName.get('tasks_list')?.annotations).toEqual({ readOnlyHint: true, openWorldHint: false });
    expect(byName.get('tasks_update')?.annotations).toEqual({ destructiveHint: false, openWorldHint: false });
    expect(byName.get('tasks_delete')?.annotations).toEqual({ openWorldHint: false });
    expect(byName.get('webhooks_create')?.annotations).toEqual({ destructiveHint: false });
    const update = byName.get('tasks_update');
    expect(Object.keys(update?.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(['id', 'status', 'idempotency_key', 'expected_version']));
    expect(byName.get('tasks_create')?.inputSchema.properties).not.toHaveProperty('expected_version');
    expect(byName.get('tasks_get')?.inputSchema.properties).not.toHaveProperty('idempotency_key');
    // Output schemas are listed on request only (?output_schemas=1, test/agent/budgets.test.ts).
    for (const tool of tools) expect(tool.outputSchema, tool.name).toBeUndefined();
  });

  it('is what the manifest announces: every operation with mcp among its interfaces', async () => {
    const manifest = (await t.request('GET', '/api/v1')).json<{ operations: { name: string; interfaces: string[] }[]; mcp: { url: string } }>();
    const onMcp = manifest.operations.filter((op) => op.interfaces.includes('mcp')).map((op) => op.name);
    expect(onMcp.sort()).toEqual((await modern.listTools()).tools.map((tool) => tool.name).sort());
    expect(manifest.operations.every((op) => op.interfaces.includes('rest'))).toBe(true);
    expect(manifest.mcp.url).toBe('http://baton.test/mcp');
  });

  it('has instructions that name the start and the one-call cycle, each a listed tool', async () => {
    const named = [...(modern.getInstructions() ?? '').matchAll(/`([a-z]+_[a-z_]+)`/g)].map((m) => m[1]);
    expect(named).toEqual(expect.arrayContaining(['tasks_claim_next', 'leases_cycle']));
    // Every other name in backticks is a member an agent sends or reads.
    const known = new Set([...(await modern.listTools()).tools.map((tool) => tool.name), 'next_actions', 'idempotency_key', 'expected_version']);
    expect(named.filter((name) => !known.has(name ?? ''))).toEqual([]);
  });

  it('lists a tool outside the caller\'s allowlist as disallowed instead of hiding it', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', allowlist: ['whoami', 'tasks_get'] });
    const client = await connectV2(baseUrl, agent.token, 'modern');
    const { tools } = await client.listTools();
    await client.close();
    const list = tools.find((tool) => tool.name === 'tasks_list');
    expect(list?._meta?.['baton/allowed']).toBe(false);
    expect(list?.description).toMatch(/may not call this/);
    // `_meta` only when it says something: absent means allowed, with no approval to wait for.
    expect(tools.find((tool) => tool.name === 'tasks_get')).not.toHaveProperty('_meta');
  });

  it('does not list to an agent the human-only tools it could never call, whatever its scopes, nor offer them in whoami or the manifest', async () => {
    const humanOnly = operations.filter((op) => op.humanOnly === true).map((op) => op.name).sort();
    expect(humanOnly).toEqual([
      'agents_create', 'agents_set_role', 'agents_update', 'approvals_approve', 'approvals_deny', 'budgets_create', 'budgets_delete', 'budgets_update',
      'exports_get', 'insight_get', 'preferences_get', 'preferences_update', 'sessions_list', 'sessions_revoke', 'tasks_requeue', 'workspaces_create', 'workspaces_update',
    ]);
    const agent = await t.addPrincipal({ kind: 'agent' });
    const client = await connectV2(baseUrl, agent.token, 'modern');
    const listed = (await client.listTools()).tools.map((tool) => tool.name);
    await client.close();
    const every = new Client({ name: 'toolsets', version: '1.0.0' });
    await every.connect(new StreamableHTTPClientTransport(new URL('/mcp?toolsets=all', baseUrl), { requestInit: { headers: { authorization: `Bearer ${agent.token}` } } }));
    const all = (await every.listTools()).tools.map((tool) => tool.name);
    await every.close();
    const whoami = (await t.request('GET', '/api/v1/whoami', { token: agent.token })).json<{ can: string[] }>();
    const compact = (await t.request('GET', '/api/v1?view=compact', { token: agent.token })).json<{ operations: Record<string, string> }>();
    const full = (await t.request('GET', '/api/v1?view=full', { token: agent.token })).json<{ operations: { name: string; allowed: boolean }[] }>();
    for (const name of humanOnly) {
      expect(listed, name).not.toContain(name);
      expect(all, name).not.toContain(name);
      expect(whoami.can, name).not.toContain(name);
      expect(Object.keys(compact.operations), name).not.toContain(name);
      expect(full.operations.find((op) => op.name === name)?.allowed, name).toBe(false);
    }
    // The flag is true: every such tool refuses an agent holding every scope.
    const task = await t.request('POST', '/api/v1/tasks', { body: { title: 'dead-lettered' } });
    const requeue = await t.request('POST', `/api/v1/tasks/${task.json<{ id: string }>().id}/requeue`, { token: agent.token, body: {} });
    expect(requeue.json<{ code: string }>().code).toBe('human_required');
    const created = await t.request('POST', '/api/v1/agents', { token: agent.token, body: { name: 'spawn', kind: 'agent', scopes: ['tasks:read'] } });
    expect(created.json<{ code: string }>().code).toBe('human_required');
  });
});

describe('tool errors reach the agent with their code, hint and retryable', () => {
  /** A task in progress, so moving it to done is an invalid transition. */
  async function taskInProgress(): Promise<{ id: string; version: number }> {
    const task = outputOf<{ id: string }>(await modern.callTool({ name: 'tasks_create', arguments: { title: 'errors' } }));
    const claimed = outputOf<{ task: { id: string; version: number } }>(await modern.callTool({ name: 'tasks_claim', arguments: { id: task.id } }));
    return claimed.task;
  }

  const clients: [string, () => Promise<{ listTools(): Promise<unknown>; callTool(p: { name: string; arguments: Record<string, unknown> }): Promise<unknown>; close(): Promise<void> }>][] = [
    ['the v2 client on 2026-07-28', () => connectV2(baseUrl, t.adminToken, 'modern')],
    ['the v2 client on 2025-11-25', () => connectV2(baseUrl, t.adminToken, 'legacy')],
    ['the 1.x client (@modelcontextprotocol/sdk)', () => connectV1(baseUrl, t.adminToken)],
  ];
  for (const [name, connect] of clients) {
    it(name, async () => {
      const client = await connect();
      // Listing first makes the client hold each tool's outputSchema, which 1.x clients check results against.
      await client.listTools();
      const task = await taskInProgress();
      const done = problemOf((await client.callTool({ name: 'tasks_update', arguments: { id: task.id, status: 'done' } })) as ToolResult);
      expect(done).toMatchObject({ code: 'invalid_transition', status: 422, retryable: false });
      expect(done.legal_transitions).toContain('in_review');
      expect(done.hint).toMatch(/in_review/);
      const stale = problemOf((await client.callTool({ name: 'tasks_update', arguments: { id: task.id, title: 'x', expected_version: task.version + 5 } })) as ToolResult);
      expect(stale).toMatchObject({ code: 'conflict_version', retryable: true, current_version: task.version });
      const invalid = problemOf((await client.callTool({ name: 'tasks_create', arguments: { title: '' } })) as ToolResult);
      expect(invalid.code).toBe('validation_failed');
      expect((invalid.errors as { pointer: string }[]).map((e) => e.pointer)).toEqual(['/title']);
      await client.close();
    });
  }
});

describe('a refusal to come back later says when, over MCP too', () => {
  it('backoff_pending carries retry_after_s (no Retry-After header reaches a tool caller), and its hint names it', async () => {
    const notBefore = new Date(Date.now() + 90_000).toISOString();
    const task = outputOf<{ id: string }>(await modern.callTool({ name: 'tasks_create', arguments: { title: 'Later', not_before: notBefore } }));
    const refused = problemOf((await modern.callTool({ name: 'tasks_claim', arguments: { id: task.id } })));
    expect(refused).toMatchObject({ code: 'backoff_pending', retryable: true });
    expect(refused.retry_after_s).toBeGreaterThan(60);
    expect(refused.hint).toContain('(see `retry_after_s`)');
    // REST has the header, and the same member in the body.
    const rest = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {} });
    expect(rest.status).toBe(409);
    expect(rest.json<{ retry_after_s: number; hint: string }>().retry_after_s).toBe(Number(rest.headers['retry-after']));
    expect(rest.json<{ hint: string }>().hint).toContain('(see `Retry-After`)');
  });
});

describe('idempotency keys over MCP', () => {
  it('generates a key when absent and returns it; the same key replays the first result', async () => {
    const first = await modern.callTool({ name: 'tasks_create', arguments: { title: 'once' } });
    const key = first._meta?.[KEY];
    expect(typeof key).toBe('string');
    expect((first.content as { text: string }[])[0]?.text).toMatch(new RegExp(`idempotency_key: ${String(key)}$`));
    const again = await modern.callTool({ name: 'tasks_create', arguments: { title: 'once', idempotency_key: key } });
    expect(again._meta).toMatchObject({ [KEY]: key, 'baton/replayed': true });
    expect(outputOf(again)).toEqual(outputOf(first));
    const reused = problemOf(await modern.callTool({ name: 'tasks_create', arguments: { title: 'different', idempotency_key: key } }));
    expect(reused.code).toBe('idempotency_key_reused');
  });
});

describe('authentication', () => {
  it('refuses a request without a valid bearer token before any MCP exchange', async () => {
    const res = await fetch(new URL('/mcp', baseUrl), {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ code: 'unauthenticated' });
    await expect(connectV2(baseUrl, 'bat_not-a-token', 'legacy')).rejects.toThrow();
  });

  it('has no session stream: an authenticated GET is 405 (the endpoint is stateless)', async () => {
    const res = await fetch(new URL('/mcp', baseUrl), { headers: { authorization: `Bearer ${t.adminToken}`, accept: 'text/event-stream' } });
    expect(res.status).toBe(405);
    expect(res.headers.get('ratelimit')).toMatch(/^"default";r=\d+/);
  });
});

describe('resources and prompts', () => {
  it('serves every spec page as a Markdown resource, the same text as GET /spec/*.md', async () => {
    const { resources } = await modern.listResources();
    expect(resources.map((r) => r.uri)).toContain('http://baton.test/spec/agent-guide.md');
    const read = await modern.readResource({ uri: 'http://baton.test/spec/agent-guide.md' });
    const [page] = read.contents as { text: string; mimeType: string }[];
    expect(page?.mimeType).toBe('text/markdown');
    expect(page?.text).toBe((await t.request('GET', '/spec/agent-guide.md')).body);
  });

  it('has a resume prompt with the resume sequence', async () => {
    const prompt = await modern.getPrompt({ name: 'resume', arguments: { last_event_id: 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV' } });
    const [message] = prompt.messages as { content: { text: string } }[];
    expect(message?.content.text).toMatch(/whoami[\s\S]*leases_list[\s\S]*tasks_get[\s\S]*events_list.*evt_01ARZ3NDEKTSV4RRFFQ69G5FAV/);
  });

  it('without a last event id, the events_list call of the resume prompt reads the newest events, as it says', async () => {
    const task = outputOf<{ id: string }>(await modern.callTool({ name: 'tasks_create', arguments: { title: 'the newest event' } }));
    // On a shared PostgreSQL another test's open transaction may hold the newest events back from cursors for a while.
    await eventsSettled(t);
    const prompt = await modern.getPrompt({ name: 'resume', arguments: {} });
    const [message] = prompt.messages as { content: { text: string } }[];
    const args = /`events_list`[^\n]* with (\{[^}]*\})/.exec(message?.content.text ?? '')?.[1];
    expect(message?.content.text).toContain('newest');
    const page = outputOf<{ data: { type: string; subject: string }[] }>(await modern.callTool({ name: 'events_list', arguments: { ...(JSON.parse(args ?? 'null') as object), limit: 1 } }));
    expect(page.data[0]).toMatchObject({ type: 'task.created', subject: task.id });
  });
});

describe('elicitation (spec/mcp.md § Elicitation)', () => {
  type Form = ElicitRequest['params'] & { requestedSchema?: { properties: Record<string, { enum?: string[] }> } };

  it('asks a human who decides approvals to approve a gated write in a host that elicits; a host that does not runs it as before', async () => {
    const forms: Form[] = [];
    let decision = 'deny';
    const host = await connectEliciting(baseUrl, t.adminToken, (params) => {
      forms.push(params);
      return { action: 'accept', content: { decision } };
    });
    const task = outputOf<{ id: string }>(await host.callTool({ name: 'tasks_create', arguments: { title: 'elicited delete' } }));
    expect(forms).toEqual([]);
    const denied = problemOf(await host.callTool({ name: 'tasks_delete', arguments: { id: task.id } }));
    expect(denied).toMatchObject({ code: 'not_confirmed', status: 409, retryable: false });
    expect(forms[0]?.message).toMatch(new RegExp(`^Approve tasks_delete\\?.*${task.id}`));
    expect(forms[0]?.requestedSchema?.properties['decision']?.enum).toEqual(['approve', 'deny']);
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(200);
    decision = 'approve';
    outputOf(await host.callTool({ name: 'tasks_delete', arguments: { id: task.id } }));
    expect(forms).toHaveLength(2);
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(404);
    await host.close();
    const other = outputOf<{ id: string }>(await modern.callTool({ name: 'tasks_create', arguments: { title: 'plain delete' } }));
    outputOf(await modern.callTool({ name: 'tasks_delete', arguments: { id: other.id } }));
  });

  it('elicits the open asks to a human reading their inbox, answers or declines them as that human, and falls back elsewhere', async () => {
    const human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'asks by elicitation' } })).json<{ id: string }>();
    const ask = async (body: Record<string, unknown>) => {
      const res = await t.request('POST', `/api/v1/tasks/${task.id}/asks`, { token: agent.token, body: { to: human.id, timeout_s: 3600, ...body } });
      expect(res.status, res.body).toBe(201);
      return res.json<{ id: string }>();
    };
    const choice = await ask({ question: 'Ship tonight?', options: [{ label: 'Ship' }, { label: 'Hold' }], default: { option: 'Hold' } });
    const free = await ask({ question: 'Which region first?', default: { text: 'eu-west' } });

    // Not asked: a host without elicitation (2026-07-28), and a 1.x client over stateless HTTP, which declares it but has no channel to be asked on.
    const plain = await connectV2(baseUrl, human.token, 'modern');
    expect(outputOf<{ counts: { unread: number } }>(await plain.callTool({ name: 'inbox_list', arguments: {} })).counts.unread).toBe(2);
    await plain.close();
    const v1 = new V1Client({ name: 'baton-test-v1-eliciting', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    let v1Asked = 0;
    v1.setRequestHandler(V1ElicitRequestSchema, () => {
      v1Asked += 1;
      return { action: 'cancel' };
    });
    await v1.connect(new V1StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { authorization: `Bearer ${human.token}` } } }));
    const v1Inbox = (await v1.callTool({ name: 'inbox_list', arguments: {} })) as ToolResult;
    expect(outputOf<{ counts: { unread: number } }>(v1Inbox).counts.unread).toBe(2);
    expect(v1Asked).toBe(0);
    await v1.close();

    const forms: Form[] = [];
    const host = await connectEliciting(baseUrl, human.token, (params): ElicitResult => {
      forms.push(params);
      return params.message.includes('Ship tonight?') ? { action: 'accept', content: { answer: 'Ship' } } : { action: 'decline' };
    });
    const inbox = await host.callTool({ name: 'inbox_list', arguments: {} });
    expect(forms.map((form) => form.requestedSchema?.properties['answer']?.enum)).toEqual(expect.arrayContaining([['Ship', 'Hold'], undefined]));
    expect(inbox._meta?.['baton/elicited']).toEqual(expect.arrayContaining([{ ask_id: choice.id, outcome: 'answered' }, { ask_id: free.id, outcome: 'declined' }]));
    const items = outputOf<{ data: { ref_id: string; state: string }[] }>(inbox).data;
    expect(items.find((item) => item.ref_id === choice.id)?.state).toBe('done');
    expect(items.find((item) => item.ref_id === free.id)?.state).toBe('read');
    const answered = (await t.request('GET', `/api/v1/asks/${choice.id}`)).json<{ status: string; answer: { option: string }; answered_by: { id: string } }>();
    expect(answered).toMatchObject({ status: 'answered', answer: { option: 'Ship' }, answered_by: { id: human.id } });
    // A declined ask stays open and is not asked again: its inbox item is read.
    expect((await t.request('GET', `/api/v1/asks/${free.id}`)).json<{ status: string }>().status).toBe('open');
    outputOf(await host.callTool({ name: 'wait', arguments: { timeout_s: 0 } }));
    expect(forms).toHaveLength(2);
    await host.close();
  });
});
