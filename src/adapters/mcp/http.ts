import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/fastify';
import { createMcpHandler, InMemoryServerEventBus, localhostAllowedHostnames, type McpHttpHandler } from '@modelcontextprotocol/server';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatonError } from '../../errors.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import type { JsonSchemas } from '../json-schema.ts';
import type { Service } from '../../service/service.ts';
import { streamEvents } from '../../operations/events/stream-events.ts';
import { resourcesChangedBy } from './resources.ts';
import { type McpCaller, mcpServerFactory } from './server.ts';
import type { SchemaMode } from './strict-schema.ts';
import type { ToolListing } from './tools.ts';
import { selectToolsets } from './toolsets.ts';
import type { ApiVersion } from '../../domain/api-version.ts';

export const MCP_PATH = '/mcp';

/**
 * Serves MCP over Streamable HTTP at /mcp with the official SDK's per-request handler: the
 * 2026-07-28 revision, and 2025-era clients through its stateless fallback. Each HTTP request is
 * authenticated first with the bearer token, exactly like REST (rate limits and revocation apply
 * per request, a batch's tool calls each counted); the SDK never sees an unauthenticated request.
 */
export function registerMcpRoute(app: FastifyInstance, service: Service, pages: ReadonlyMap<string, string>, schemas: JsonSchemas): void {
  const build = mcpServerFactory(service, pages, schemas);
  const options = { onerror: (error: Error) => app.log.debug({ err: error }, 'mcp request rejected') };
  const factory = (ctx: { era: 'legacy' | 'modern'; authInfo?: { extra?: Record<string, unknown> } }) =>
    build(ctx.authInfo?.extra?.['caller'] as McpCaller, { subscribe: ctx.era === 'modern', tasks: ctx.era === 'modern' });
  const handler = createMcpHandler(factory, options);
  app.addHook('onClose', () => handler.close());
  app.route({
    method: ['GET', 'POST', 'DELETE'],
    url: MCP_PATH,
    // Fastify's automatic HEAD would send the SDK's Response object as a body: a 500.
    exposeHeadRoute: false,
    onRequest: rebindingProtection(service),
    handler: async (request, reply) => {
      const { principal, budget } = await authenticateRequest(service, request, reply, 'mcp', toolCalls(request.body));
      const query = request.query as { toolsets?: string; output_schemas?: string; schemas?: string; api?: string };
      const listing: ToolListing = {
        toolsets: selectToolsets(query.toolsets, principal),
        outputSchemas: query.output_schemas === '1' || query.output_schemas === 'true',
        schemas: schemaMode(query.schemas),
        apiVersion: apiVersionOf(query.api),
      };
      const caller: McpCaller = { principal, budget, requestId: request.id, listing };
      const controller = new AbortController();
      reply.raw.once('close', () => controller.abort());
      const listen = isListen(request.body) ? await listenHandler(caller, controller) : undefined;
      const response = await (listen ?? handler).fetch(webRequest(request, controller.signal), {
        authInfo: { token: principal.tokenId, clientId: principal.id, scopes: [...principal.scopes], extra: { caller } },
        parsedBody: request.body,
      });
      if (listen) controller.signal.addEventListener('abort', () => void listen.close(), { once: true });
      return reply.send(response);
    },
  });

  /** A handler for one listen stream, its bus fed by the caller's events until the client goes. */
  async function listenHandler(caller: McpCaller, stop: AbortController): Promise<McpHttpHandler> {
    const bus = new InMemoryServerEventBus((error) => app.log.warn({ err: error }, 'mcp listen delivery failed'));
    const events = await service.subscribe(streamEvents, {}, { principal: caller.principal, stop });
    void (async () => {
      try {
        for await (const event of events as AsyncIterable<{ type: string; subject: string }>) {
          for (const uri of resourcesChangedBy(event)) bus.publish({ kind: 'resource_updated', uri });
        }
      } catch (err) {
        app.log.warn({ err }, 'mcp listen stream ended; the client listens again');
      }
    })();
    return createMcpHandler(factory, { ...options, bus });
  }
}

/**
 * The SDK's bound on a JSON-RPC batch (2025-era clients only; the 2026 revision sends one message a
 * request): a longer one it refuses whole (400) before any call runs.
 */
const MAX_BATCH = 100;

/**
 * The operations a request spends of the rate budget: each `tools/call` of a JSON-RPC batch, all or
 * none (spec/mcp.md, "Connecting"); 1 for a single message, a batch without tool calls, or one the
 * SDK refuses whole.
 */
function toolCalls(body: unknown): number {
  if (!Array.isArray(body) || body.length > MAX_BATCH) return 1;
  const calls = body.filter((message: unknown) => typeof message === 'object' && message !== null && (message as { method?: unknown }).method === 'tools/call').length;
  return Math.max(1, calls);
}

function isListen(body: unknown): boolean {
  return typeof body === 'object' && body !== null && (body as { method?: unknown }).method === 'subscriptions/listen';
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

/** `?api=`: `v1` (the default) or `v2`, the REST version whose answers the tools give; anything else is a 400. */
function apiVersionOf(query: string | undefined): ApiVersion {
  if (query === undefined || query === '' || query === 'v1') return 1;
  if (query === 'v2') return 2;
  throw new BatonError('invalid_parameter', `api must be v1 or v2, not ${JSON.stringify(query)}.`, {
    hint: 'Ask for /mcp?api=v2 (leaner tasks, spec/api.md#versions), or leave it out for v1.',
    extra: { errors: [{ pointer: '/api', detail: 'v1 or v2', location: 'query' }] },
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
