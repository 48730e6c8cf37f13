import type { FastifyReply } from 'fastify';
import { type BatonError, toProblem } from '../../errors.ts';
import { type ProblemSource, restDialect } from './dialect.ts';
import { versionOfPath } from '../../domain/api-version.ts';

export const PROBLEM_TYPE = 'application/problem+json';

/** Sends an error as an RFC 9457 problem document, with the headers it carries (Retry-After, ETag). */
export function sendProblem(reply: FastifyReply, error: BatonError, source: ProblemSource, requestId: string): FastifyReply {
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  // Its hints name routes in the version the request was made to.
  const problem = toProblem(error, source.baseUrl, restDialect(source.operations, versionOfPath(reply.request.url)));
  if (problem.status >= 500) problem.request_id = requestId;
  return reply.code(error.status).type(PROBLEM_TYPE).send(JSON.stringify(problem));
}
