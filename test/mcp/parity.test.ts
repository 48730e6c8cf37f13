import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { asMcpClient, connectV2, listen } from './clients.ts';
import { mcpAnswer, walkParity } from './parity.ts';

let t: TestServer;
let baseUrl: string;
let client: Client;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
  client = await connectV2(baseUrl, t.adminToken, 'modern');
});
afterAll(async () => {
  await client.close();
  await t.close();
});

describe('REST and MCP over Streamable HTTP agree', () => {
  it('on every registry operation', async () => {
    expect(await walkParity(t, asMcpClient(client), t.adminToken)).toEqual([]);
  });
});

describe('a refusal looks the same on REST and MCP', () => {
  it('for a missing scope and for an operation outside the allowlist', async () => {
    const reader = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    const allowlisted = await t.addPrincipal({ kind: 'agent', allowlist: ['whoami', 'tasks_get'] });
    for (const [who, name, method, path, body] of [
      [reader, 'tasks_create', 'POST', '/api/v1/tasks', { title: 'not allowed' }],
      [allowlisted, 'tasks_list', 'GET', '/api/v1/tasks', undefined],
    ] as const) {
      const rest = await t.request(method, path, { token: who.token, ...(body ? { body } : {}) });
      const mcp = await connectV2(baseUrl, who.token, 'modern');
      const result = await mcp.callTool({ name, arguments: body ?? {} });
      await mcp.close();
      // The same problem, its hint worded for MCP (spec/mcp.md, "Errors").
      const { hint: restHint, ...restProblem } = rest.json<{ hint: string }>();
      const { hint: mcpHint, ...mcpProblem } = mcpAnswer(result).body as { hint: string };
      expect(mcpProblem).toEqual(restProblem);
      expect(mcpHint.replace('`whoami`', 'GET /api/v1/whoami')).toBe(restHint);
      expect(rest.json<{ code: string }>().code).toBe(name === 'tasks_create' ? 'forbidden_scope' : 'tool_not_allowed');
    }
  });
});
