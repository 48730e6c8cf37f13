import { A2A_VERSION_HEADER, AgentCard, formatSSEErrorEvent, formatSSEEvent } from '@a2a-js/sdk';
import { JsonRpcTransportHandler, ServerCallContext, validateVersion } from '@a2a-js/sdk/server';
import type { FastifyInstance } from 'fastify';
import { authenticateRequest } from '../authenticate-request.ts';
import type { Service } from '../../service/service.ts';
import { A2A_PATH, buildAgentCard } from './agent-card.ts';
import { BatonUser, batonRequestHandler } from './request-handler.ts';

/** Where A2A clients look for the card (A2A §8.2, RFC 8615). */
const AGENT_CARD_URL = '/.well-known/agent-card.json';
/** A comment line this often keeps proxies from closing a quiet A2A stream (as on /events/stream). */
const PING_MS = 15_000;

/**
 * Serves A2A: the public Agent Card, and the JSON-RPC binding at /a2a through the SDK's
 * `JsonRpcTransportHandler` over Baton's request handler. Every request is authenticated first
 * with the bearer token, exactly like REST (a missing or bad token is REST's 401 problem);
 * streaming methods answer Server-Sent Events, one JSON-RPC response per `data:` frame.
 */
export function registerA2ARoutes(app: FastifyInstance, service: Service): void {
  const card = buildAgentCard(service.baseUrl);
  const cardJson = JSON.stringify(AgentCard.toJSON(card));
  const transport = new JsonRpcTransportHandler(batonRequestHandler(service, card));

  app.get(AGENT_CARD_URL, async (_request, reply) => reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=300').send(cardJson));

  app.post(A2A_PATH, async (request, reply) => {
    const caller = await authenticateRequest(service, request, reply, 'a2a');
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    const version = request.headers[A2A_VERSION_HEADER.toLowerCase()];
    const context = new ServerCallContext({ user: new BatonUser({ ...caller, requestId: request.id }, gone.signal), ...(typeof version === 'string' ? { requestedVersion: version } : {}) });
    const id = (request.body as { id?: unknown } | null)?.id ?? null;
    try {
      validateVersion(context.requestedVersion, card, 'JSONRPC');
    } catch (error) {
      return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    const answer = await transport.handle(request.body as Record<string, unknown>, context);
    if (!(Symbol.asyncIterator in answer)) return reply.send(answer);
    const frames = answer[Symbol.asyncIterator]();
    let first: IteratorResult<unknown>;
    try {
      first = await frames.next();
    } catch (error) {
      // Refused before the first event (a bad task id, a refused write): a plain JSON-RPC error.
      return reply.send({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) });
    }
    reply.hijack();
    const res = reply.raw;
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string | number | string[]>),
      'x-request-id': request.id,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    const ping = setInterval(() => res.write(': ping\n\n'), PING_MS);
    try {
      for (let next = first; !next.done; next = await frames.next()) res.write(formatSSEEvent(next.value));
    } catch (error) {
      request.log.warn({ err: error }, 'a2a stream ended with an error');
      res.write(formatSSEErrorEvent({ jsonrpc: '2.0', id, error: JsonRpcTransportHandler.mapToJSONRPCError(error) }));
    } finally {
      clearInterval(ping);
      gone.abort();
      res.end();
    }
  });
}
