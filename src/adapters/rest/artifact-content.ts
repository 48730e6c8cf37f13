import type { FastifyInstance } from 'fastify';
import { MEDIA_TYPE } from '../../operations/artifacts/create-artifact.ts';
import { getArtifact } from '../../operations/artifacts/get-artifact.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import type { Service } from '../../service/service.ts';
import { ifNoneMatchHits } from './if-match.ts';
import { restDialect } from './dialect.ts';
import { API_VERSIONS, type ApiVersion, apiPrefix } from '../../domain/api-version.ts';

/**
 * `GET /api/v1/artifacts/{id}/content` (and v2's): the raw bytes of an artifact, the REST form of
 * `artifacts_get` with its body (same scope, allowlist entry and errors). Served with the stored
 * content type, `ETag: "<sha256>"` (If-None-Match → 304), and as an attachment, so a stored HTML
 * file is never rendered in Baton's origin.
 */
export function registerArtifactContentRoute(app: FastifyInstance, service: Service): void {
  for (const version of API_VERSIONS) registerIn(app, service, version);
}

function registerIn(app: FastifyInstance, service: Service, version: ApiVersion): void {
  app.get<{ Params: { id: string } }>(`${apiPrefix(version)}/artifacts/:id/content`, async (request, reply) => {
    const { principal, budget } = await authenticateRequest(service, request, reply, getArtifact.name);
    const outcome = await service.execute(getArtifact, { id: request.params.id, content: 'base64' }, {
      principal,
      idempotencyKey: undefined,
      expectedVersion: undefined,
      requestId: request.id,
      budget,
      dialect: restDialect(service.operations, version),
    });
    // A read either succeeds or throws a BatonError (answered by the app's error handler).
    const artifact = JSON.parse(outcome.body) as { sha256: string; content_type: string; content: string };
    reply.header('etag', `"${artifact.sha256}"`).header('x-content-type-options', 'nosniff').header('content-disposition', 'attachment');
    if (ifNoneMatchHits(request.headers['if-none-match'], artifact.sha256)) return reply.code(304).send();
    // One stored before content types were held to header-safe text is served as plain bytes.
    const type = MEDIA_TYPE.test(artifact.content_type) ? artifact.content_type : 'application/octet-stream';
    return reply.type(type).send(Buffer.from(artifact.content, 'base64'));
  });
}
