import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Authenticated, rateLimitHeaders } from '../service/authenticate.ts';
import type { Service } from '../service/service.ts';
import { sessionSecret } from './identity/cookies.ts';

/**
 * The prelude of every authenticated HTTP request (bearer token, or the session cookie without one) (REST, SSE, MCP, GraphQL): names the operation for
 * the request log, refuses it at once when the database is too busy for it (`Service.admit`), authenticates and counts the request (its
 * `operations`: 1, or a GraphQL mutation's fields, an MCP batch's tool calls), sets the RateLimit fields before anything
 * runs (so an error answer carries the budget too), and records the principal for the log line.
 */
export async function authenticateRequest(service: Service, request: FastifyRequest, reply: FastifyReply, operationName: string, operations = 1): Promise<Authenticated> {
  request.operationName = operationName;
  service.admit(operationName);
  const caller = await service.authenticate(request.headers.authorization, sessionSecret(request), operations);
  reply.headers(rateLimitHeaders(caller.budget));
  request.principalId = caller.principal.id;
  request.principalKind = caller.principal.kind;
  return caller;
}
