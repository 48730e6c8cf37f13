import { Client, type ElicitRequest, type ElicitResult, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as V1StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';
import type { TestServer } from '../harness.ts';

/** What a tool call answered, as any of the official clients returns it. */
export interface ToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

/** The calls every client under test makes: the SDKs' own `Client` classes, not hand-rolled JSON-RPC. */
export interface McpClient {
  callTool(name: string, args?: Record<string, unknown>): Promise<ToolResult>;
  close(): Promise<void>;
}

/** The calls the parity walk makes, through a v2 SDK `Client` on any transport. */
export function asMcpClient(client: Client): McpClient {
  return { callTool: (name, args) => client.callTool({ name, arguments: args }), close: () => client.close() };
}

/** Listens on a loopback port (MCP over HTTP needs a real one) and returns the base URL; `t.close()` stops it. */
export async function listen(t: TestServer): Promise<string> {
  return t.app.listen({ port: 0, host: '127.0.0.1' });
}

/** The v2 SDK client: `modern` negotiates the 2026-07-28 revision, `legacy` speaks 2025-11-25; `query` is /mcp's (`toolsets=all`). */
export async function connectV2(baseUrl: string, token: string, era: 'modern' | 'legacy', query = ''): Promise<Client> {
  const client = new Client({ name: 'baton-test-v2', version: '1.0.0' }, { versionNegotiation: { mode: era === 'modern' ? 'auto' : 'legacy' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp${query ? `?${query}` : ''}`, baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/**
 * The v2 SDK client of a host that takes form elicitation (`elicitation: {form: {}}`) on the 2026-07-28
 * revision: `answer` plays the person at the host; the client fulfils `input_required` through it.
 */
export async function connectEliciting(baseUrl: string, token: string, answer: (params: ElicitRequest['params']) => ElicitResult): Promise<Client> {
  const client = new Client({ name: 'baton-test-eliciting', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('elicitation/create', (request) => answer(request.params));
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** The 1.x SDK client (`@modelcontextprotocol/sdk`), as most agents in the field run it (2025-11-25). */
export async function connectV1(baseUrl: string, token: string): Promise<V1Client> {
  const client = new V1Client({ name: 'baton-test-v1', version: '1.0.0' });
  await client.connect(new V1StreamableHTTPClientTransport(new URL('/mcp', baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

/** The problem document of a failed tool call: it travels as the JSON text of the first content block. */
export function problemOf(result: ToolResult): Record<string, unknown> {
  expect(result.isError, JSON.stringify(result)).toBe(true);
  const [first] = result.content as { type: string; text: string }[];
  expect(first?.type).toBe('text');
  return JSON.parse(first?.text ?? '') as Record<string, unknown>;
}

/** The structured output of a successful tool call. */
export function outputOf<T = Record<string, unknown>>(result: ToolResult): T {
  expect(result.isError ?? false, JSON.stringify(result)).toBe(false);
  return result.structuredContent as T;
}
