import type { FastifyInstance, FastifyRequest } from 'fastify';
import { BatonError } from '../../errors.ts';
import { type Operation, pathParameters } from '../../operations/define-operation.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import type { Service } from '../../service/service.ts';
import type { Outcome } from '../../service/execute.ts';
import { bounded, ifNoneMatchHits, parseIdempotencyKey, parseIfMatch } from './if-match.ts';
import { restDialect } from './dialect.ts';
import { downloadFormat, sendDownload } from './download.ts';
import { registerStreamRoute } from './stream-route.ts';
import { API_VERSIONS, type ApiVersion, apiPrefix } from '../../domain/api-version.ts';
import { uploadSlots } from './upload-slots.ts';

export const API_PREFIX = apiPrefix(1);

/** The Fastify path of an operation in an API version: `{id}` becomes `:id`. */
export function routeUrl(operation: Operation, version: ApiVersion = 1): string {
  return apiPrefix(version) + operation.http.path.replace(/\{(\w+)\}/g, ':$1');
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set once authenticated, for the request log. */
    principalId?: string;
    principalKind?: string;
    operationName?: string;
  }
}

/** One route per registry entry and API version. Nothing here knows any single operation. */
export function registerOperationRoutes(app: FastifyInstance, service: Service): void {
  // Collections whose members have a GET route, so a 201 can say where the new member lives.
  const readable = new Set(
    service.operations.filter((op) => op.http.method === 'GET' && op.http.path.endsWith('/{id}')).map((op) => op.http.path.slice(0, -'/{id}'.length)),
  );
  // One limit on uploads in flight, whichever version they come to.
  const shared = { readable, takeUploadSlot: uploadSlots(service.config) };
  for (const version of API_VERSIONS) registerVersion(app, service, version, shared);
}

/** A version's routes: the same operations, answered in that version's shape (service/execute.ts `inV2`). */
function registerVersion(
  app: FastifyInstance,
  service: Service,
  version: ApiVersion,
  { readable, takeUploadSlot }: { readonly readable: ReadonlySet<string>; readonly takeUploadSlot: ReturnType<typeof uploadSlots> },
): void {
  const prefix = apiPrefix(version);
  const dialect = restDialect(service.operations, version);
  for (const operation of service.operations) {
    if (operation.kind === 'stream') {
      registerStreamRoute(app, service, operation, routeUrl(operation, version));
      continue;
    }
    const inPath = pathParameters(operation.http.path);
    app.route({
      method: operation.http.method,
      url: routeUrl(operation, version),
      ...(operation.http.bodyLimit === 'artifact' ? { bodyLimit: base64BodyLimit(service.config.artifactMaxBytes), onRequest: takeUploadSlot } : {}),
      handler: async (request, reply) => {
        const { principal, budget } = await authenticateRequest(service, request, reply, operation.name);
        const download = operation.http.download ? downloadFormat(header(request, 'accept')) : undefined;
        if (download) {
          const call = { principal, idempotencyKey: undefined, expectedVersion: undefined, requestId: request.id, budget, dialect, apiVersion: version };
          return sendDownload(service, operation, request, reply, call, download);
        }
        // Bounded before the read runs, so a refusal does not depend on whether the resource exists.
        const ifNoneMatch = header(request, 'if-none-match');
        if (ifNoneMatch !== undefined) bounded('If-None-Match', ifNoneMatch);
        const outcome = await service.execute(operation, restInput(operation, inPath, request), {
          principal,
          idempotencyKey: operation.kind === 'write' ? parseIdempotencyKey(header(request, 'idempotency-key')) : undefined,
          expectedVersion: operation.kind === 'write' ? parseIfMatch(header(request, 'if-match')) : undefined,
          requestId: request.id,
          budget,
          dialect,
          apiVersion: version,
        });
        if (outcome.replayed) reply.header('idempotency-replayed', 'true');
        if (outcome.version !== undefined) {
          reply.header('etag', `"${outcome.version}"`);
          if (operation.kind === 'read' && ifNoneMatchHits(header(request, 'if-none-match'), outcome.version)) {
            return reply.code(304).send();
          }
        }
        const location = locationOf(outcome, readable.has(operation.http.path));
        if (location && (outcome.status === 201 || outcome.status === 202)) {
          reply.header('location', outcome.status === 202 ? `${prefix}/approvals/${location}` : `${prefix}${operation.http.path}/${location}`);
        }
        return reply
          .code(outcome.status)
          .type(outcome.ok ? 'application/json; charset=utf-8' : 'application/problem+json')
          .send(outcome.body);
      },
    });
  }
}

/** The JSON body that carries `maxBytes` as base64 (4 characters per 3 bytes), plus room for the other fields. */
function base64BodyLimit(maxBytes: number): number {
  return Math.ceil(maxBytes / 3) * 4 + 64 * 1024;
}

/** The id for a Location header: the created member's (201, when readable) or the pending approval's (202). */
function locationOf(outcome: Outcome, readable: boolean): string | undefined {
  if (!outcome.ok || (outcome.status !== 201 && outcome.status !== 202) || (outcome.status === 201 && !readable)) return undefined;
  return outcome.id;
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(', ') : value;
}

/** Path parameters (named in `inPath`) plus the query (reads, deletes) or the JSON body (other writes). */
function restInput(operation: Operation, inPath: readonly string[], request: FastifyRequest): Record<string, unknown> {
  const params = request.params as Record<string, string>;
  if (operation.http.method === 'GET' || operation.http.method === 'DELETE') {
    return { ...(request.query as Record<string, unknown>), ...params };
  }
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new BatonError('validation_failed', 'The request body must be a JSON object.', {
      extra: { errors: [{ pointer: '', detail: 'expected a JSON object', location: 'body' }] },
    });
  }
  const misplaced = inPath.filter((key) => key in body);
  if (misplaced.length > 0) {
    throw new BatonError('validation_failed', `${misplaced.join(', ')} belongs in the URL path, not the body.`, {
      extra: { errors: misplaced.map((key) => ({ pointer: `/${key}`, detail: 'path parameter; remove it from the body', location: 'body' })) },
    });
  }
  const query = request.query as Record<string, unknown>;
  const input: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const key of operation.http.query ?? []) if (key in query) input[key] = query[key];
  return Object.assign(input, params);
}
