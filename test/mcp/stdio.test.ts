import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema, ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { StdioClientTransport as V1StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { asMcpClient, listen, outputOf, problemOf } from './clients.ts';
import { walkParity } from './parity.ts';

/**
 * `baton mcp` as a local agent runs it: the real CLI process, spawned by the SDKs' own stdio
 * transports, talking to a real listening Baton. Few processes: each spawn costs about a second.
 */
const CLI = fileURLToPath(new URL('../../src/cli/baton.ts', import.meta.url));

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

function cli(token: string, ...options: string[]) {
  return { command: process.execPath, args: [CLI, 'mcp', ...options], env: { ...getDefaultEnvironment(), BATON_URL: baseUrl, BATON_TOKEN: token }, stderr: 'pipe' as const };
}

/** Runs `baton mcp` to its exit, without blocking this process (which serves the Baton it talks to). */
async function runCli(env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'mcp'], { env: { ...getDefaultEnvironment(), ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const [status] = (await once(child, 'close')) as [number | null];
  return { status, stderr };
}

describe('baton mcp (stdio)', () => {
  it('answers every registry operation as REST does, to the v2 client on 2026-07-28', async () => {
    const client = new Client({ name: 'baton-test-stdio', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StdioClientTransport(cli(t.adminToken)));
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
      // The server's Tasks extension is served over HTTP; the bridge relays no tasks/* method, so it does not offer it.
      expect(client.getServerCapabilities()).not.toHaveProperty('extensions');
      expect(await walkParity(t, asMcpClient(client), t.adminToken)).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('serves a 1.x client (2025-11-25), problem documents included', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    const client = new V1Client({ name: 'baton-test-stdio-v1', version: '1.0.0' });
    await client.connect(new V1StdioClientTransport(cli(agent.token)));
    try {
      await client.listTools();
      expect(outputOf<{ principal: { id: string } }>(await client.callTool({ name: 'whoami', arguments: {} })).principal.id).toBe(agent.id);
      expect(problemOf(await client.callTool({ name: 'tasks_create', arguments: { title: 'no scope' } }))).toMatchObject({ code: 'forbidden_scope', retryable: false });
      const { resources } = await client.listResources();
      expect(resources.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it('with --api v2, answers v2 tasks and states v2\'s next-action rule', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:claim'] });
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'over stdio, v2', labels: ['stdio-v2'] } })).json<{ id: string }>();
    const client = new Client({ name: 'baton-test-stdio-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StdioClientTransport(cli(agent.token, '--api', 'v2')));
    try {
      expect(client.getInstructions()).toContain('a `leases_*` tool takes the lease');
      const claim = outputOf<{ task: { id: string; lease: object; next_actions: object[] } }>(await client.callTool({ name: 'tasks_claim', arguments: { id: task.id } }));
      expect(claim.task.id).toBe(task.id);
      expect(claim.task.lease).not.toHaveProperty('holder');
      expect(claim.task.next_actions[0]).toMatchObject({ operation: 'leases_heartbeat' });
      expect(claim.task.next_actions[0]).not.toHaveProperty('href');
    } finally {
      await client.close();
    }
  });

  it('gives a 1.x client resources/subscribe, relaying the server\'s updates when the task changes over REST', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'events:read'] });
    const created = await t.request('POST', '/api/v1/tasks', { body: { title: 'Watched over stdio' } });
    const task = created.json<{ id: string; version: number }>();
    const client = new V1Client({ name: 'baton-test-stdio-subscribe', version: '1.0.0' });
    await client.connect(new V1StdioClientTransport(cli(agent.token)));
    try {
      expect(client.getServerCapabilities()?.resources).toMatchObject({ subscribe: true, listChanged: false });
      const uri = `baton://tasks/${task.id}`;
      const updated = new Promise<string>((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => resolve(notification.params.uri)));
      await client.subscribeResource({ uri });
      const changed = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Watched over stdio, renamed' }, ifMatch: `"${task.version}"` });
      expect(changed.status, changed.body).toBe(200);
      expect(await updated).toBe(uri);
      const [content] = (await client.readResource({ uri })).contents as { text: string }[];
      expect(JSON.parse(content?.text ?? '')).toMatchObject({ id: task.id, title: 'Watched over stdio, renamed' });
      await client.unsubscribeResource({ uri });
    } finally {
      await client.close();
    }
  });

  it('relays elicitation: a 1.x host (2025-11-25) answers an ask in its inbox, a 2026-07-28 host denies a gated write', async () => {
    const human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'Asked over stdio' } })).json<{ id: string }>();
    const asked = await t.request('POST', `/api/v1/tasks/${task.id}/asks`, { token: agent.token, body: { to: human.id, question: 'Which region?', timeout_s: 600, default: { text: 'eu-west' } } });
    expect(asked.status, asked.body).toBe(201);
    const v1 = new V1Client({ name: 'baton-test-stdio-eliciting', version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const questions: string[] = [];
    v1.setRequestHandler(ElicitRequestSchema, (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { answer: 'us-east' } };
    });
    await v1.connect(new V1StdioClientTransport(cli(human.token)));
    try {
      const inbox = await v1.callTool({ name: 'inbox_list', arguments: {} });
      expect(questions).toEqual([expect.stringContaining('Which region?')]);
      expect(inbox._meta?.['baton/elicited']).toEqual([{ ask_id: asked.json<{ id: string }>().id, outcome: 'answered' }]);
    } finally {
      await v1.close();
    }
    expect((await t.request('GET', `/api/v1/asks/${asked.json<{ id: string }>().id}`)).json<{ answer: { text: string } }>().answer.text).toBe('us-east');

    const modern = new Client({ name: 'baton-test-stdio-eliciting-v2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } });
    modern.setRequestHandler('elicitation/create', () => ({ action: 'accept', content: { decision: 'deny' } }));
    await modern.connect(new StdioClientTransport(cli(t.adminToken)));
    try {
      expect(problemOf(await modern.callTool({ name: 'tasks_delete', arguments: { id: task.id } }))).toMatchObject({ code: 'not_confirmed' });
    } finally {
      await modern.close();
    }
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(200);
  });

  it('passes the server\'s problem on a refused token to the MCP client, and to stderr', async () => {
    const client = new Client({ name: 'baton-test-stdio-refused', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new StdioClientTransport(cli(generateToken()));
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    await client.connect(transport);
    try {
      expect(client.getInstructions()).toMatch(/invalid_token, HTTP 401/);
      const refused = await client.listTools().then(() => undefined, (error: unknown) => error as Error);
      expect(refused?.message).toMatch(/Token not accepted \(invalid_token, HTTP 401\)/);
      expect(refused?.message).toContain('Hint: The token is malformed, unknown, expired or revoked');
      expect(refused?.message).toContain(`${baseUrl}/mcp`);
    } finally {
      await client.close();
    }
    expect(stderr).toContain('Hint: The token is malformed, unknown, expired or revoked');
  });

  it('names the URL it tried when the server cannot be reached', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const unreachable = await runCli({ BATON_URL: `http://127.0.0.1:${port}`, BATON_TOKEN: generateToken() });
    expect(unreachable.status).toBe(7); // README, "Exit codes": the server is unreachable
    expect(unreachable.stderr).toContain(`http://127.0.0.1:${port}/mcp`);
    expect(unreachable.stderr).toMatch(/ECONNREFUSED/);
  });

  it('exits with a message when the token is missing or refused', async () => {
    const missing = await runCli({ BATON_URL: baseUrl });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/BATON_TOKEN/);
    const refused = await runCli({ BATON_URL: baseUrl, BATON_TOKEN: generateToken() });
    expect(refused.status).toBe(3); // README, "Exit codes": the token was refused
    expect(refused.stderr).toMatch(/401|invalid_token/);
  });
});
