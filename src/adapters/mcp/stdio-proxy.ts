import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { StdioConfig } from '../../config.ts';
import { MCP_PATH } from './http.ts';
import { BATON_VERSION } from '../../version.ts';

const IDENTITY = { name: 'baton', version: BATON_VERSION };

/**
 * `baton mcp`: an MCP server on this process's stdio that forwards every request to a Baton
 * server's /mcp with the bearer token. No tool logic lives here, so stdio clients get exactly
 * what Streamable HTTP clients get, and every call is authenticated, rate limited and logged by
 * the server. Resolves once connected to the server; stops when stdin closes.
 */
export async function serveStdioProxy(config: StdioConfig): Promise<void> {
  const remote = new Client({ name: 'baton-mcp-stdio', version: IDENTITY.version }, { versionNegotiation: { mode: 'auto' } });
  await remote.connect(
    new StreamableHTTPClientTransport(new URL(MCP_PATH, config.url), { requestInit: { headers: { authorization: `Bearer ${config.token}` } } }),
  );
  const capabilities = remote.getServerCapabilities() ?? {};
  const handle = serveStdio(() => {
    const server = new Server(remote.getServerVersion() ?? IDENTITY, { capabilities, instructions: remote.getInstructions() });
    server.setRequestHandler('tools/list', (request) => remote.listTools(request.params));
    // Results are already shaped (structuredContent objects) by the server; projection only adapts the era.
    server.setRequestHandler('tools/call', async (request) => server.projectCallToolResult(await remote.callTool(request.params), undefined));
    server.setRequestHandler('resources/list', (request) => remote.listResources(request.params));
    server.setRequestHandler('resources/templates/list', (request) => remote.listResourceTemplates(request.params));
    server.setRequestHandler('resources/read', (request) => remote.readResource(request.params));
    server.setRequestHandler('prompts/list', (request) => remote.listPrompts(request.params));
    server.setRequestHandler('prompts/get', (request) => remote.getPrompt(request.params));
    return server;
  });
  process.stdin.once('end', () => void Promise.all([handle.close(), remote.close()]));
}
