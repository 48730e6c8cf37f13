import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV1, connectV2, listen } from '../mcp/clients.ts';

/** The tool-name pattern OpenAI-style function calling and several MCP hosts require (issue 23). */
const PORTABLE = /^[a-zA-Z0-9_-]{1,64}$/;

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

describe('every name an agent sees is portable', () => {
  it('every registry operation name', () => {
    for (const op of operations) expect(op.name).toMatch(PORTABLE);
  });

  it('every MCP tool name, in every tool set, through the 1.x and the v2 client', async () => {
    const v2 = await connectV2(baseUrl, t.adminToken, 'modern');
    const v1 = await connectV1(baseUrl, t.adminToken);
    for (const { tools } of [await v2.listTools(), await v1.listTools()]) {
      expect(tools.length).toBeGreaterThan(0);
      for (const tool of tools) expect(tool.name).toMatch(PORTABLE);
    }
    await v2.close();
    await v1.close();
  });

  it('every name in the manifest, the OpenAPI operationIds and whoami', async () => {
    const manifest = (await t.request('GET', '/api/v1?view=full')).json<{ operations: { name: string }[] }>();
    for (const op of manifest.operations) expect(op.name).toMatch(PORTABLE);
    const openapi = (await t.request('GET', '/api/v1/openapi.json')).json<{ paths: Record<string, Record<string, { operationId: string }>> }>();
    for (const item of Object.values(openapi.paths)) for (const op of Object.values(item)) expect(op.operationId).toMatch(PORTABLE);
    for (const name of (await t.request('GET', '/api/v1/whoami')).json<{ can: string[] }>().can) expect(name).toMatch(PORTABLE);
  });
});
