import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/fastify';
import { createMcpHandler, localhostAllowedHostnames } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatonError } from '../../errors.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import type { Service } from '../../service/service.ts';
import { type McpCaller, mcpServerFactory } from './server.ts';
import type { SchemaMode } from './strict-schema.ts';
import type { ToolListing } from './tools.ts';
import { selectToolsets } from './toolsets.ts';

export const MCP_PATH = '/mcp';

/**
 * Serves MCP over Streamable HTTP at /mcp with the official SDK's per-request handler: the
 * 2026-07-28 revision, and 2025-era clients through its stateless fallback. Each HTTP request is
 * authenticated first with the bearer token, exactly like REST (rate limits and revocation apply
 * per request); the SDK never sees an unauthenticated request.
 */
export function registerMcpRoute(app: FastifyInstance, service: Service, pages: ReadonlyMap<string, string>): void {
  const build = mcpServerFactory(service, pages);
  const handler = createMcpHandler((ctx) => build(ctx.authInfo?.extra?.caller as McpCaller), {
    onerror: (error) => app.log.debug({ err: error }, 'mcp request rejected'),
  });
  app.addHook('onClose', () => handler.close());
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    onRequest: rebindingProtection(service),
    handler: async (request, reply) => {
      const { principal, budget } = await authenticateRequest(service, request, reply, 'mcp');
      const query = request.query as { toolsets?: string; output_schemas?: string; schemas?: string };
      const listing: ToolListing = {
        toolsets: selectToolsets(query.toolsets, principal),
        outputSchemas: query.output_schemas === '1' || query.output_schemas === 'true',
        schemas: schemaMode(query.schemas),
      };
      const caller: McpCaller = { principal, budget, requestId: request.id, listing };
      const controller = new AbortController();
      reply.raw.once('close', () => controller.abort());
      const response = await handler.fetch(webRequest(request, controller.signal), {
        authInfo: { token: principal.tokenId, clientId: principal.id, scopes: [...principal.scopes], extra: { caller } },
        parsedBody: request.body,
      });
      return reply.send(response);
    },
  });
}

/** `?schemas=`: `loose` (the default) or `strict`; anything else is a 400. */
function schemaMode(query: string | undefined): SchemaMode {
  if (query === undefined || query === '' || query === 'loose') return 'loose';
  if (query === 'strict') return 'strict';
  throw new BatonError('invalid_parameter', `schemas must be loose or strict, not ${JSON.stringify(query)}.`, {
    hint: 'Ask for /mcp?schemas=strict (OpenAI and Anthropic strict modes), or leave it out.',
    extra: { errors: [{ pointer: '/schemas', detail: 'loose or strict', location: 'query' }] },
  });
}

/**
 * DNS-rebinding protection (MCP transport security), as the SDK's Fastify adapter applies it: on a
 * loopback bind, a request whose Host or Origin is not loopback (or BATON_PUBLIC_URL's host) is 403.
 */
function rebindingProtection(service: Service) {
  const loopback = localhostAllowedHostnames();
  if (!loopback.includes(service.config.host) && service.config.host !== '::1') return [];
  const hosts = [...loopback, new URL(service.baseUrl).hostname];
  return [hostHeaderValidation(hosts), originValidation(hosts)];
}

/** The Fetch API view of a Fastify request the SDK handler takes; the body is passed already parsed. */
function webRequest(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  }
  return new Request(`http://${request.host}${request.url}`, { method: request.method, headers, signal });
}
