import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BatonError, type ErrorCode, toProblem } from '../../errors.ts';
import { type ProblemSource, restDialect } from './dialect.ts';
import { PROBLEM_TYPE, sendProblem } from './problem.ts';

/**
 * Fastify's `frameworkErrors`: what the router refuses before any route runs (bad
 * percent-encoding in the path, a path parameter past `maxParamLength`) is a problem document
 * too, not Fastify's own JSON. `beforeSend` adds what every answer carries (the rate budget).
 */
export function frameworkErrors(source: ProblemSource, beforeSend: (request: FastifyRequest, reply: FastifyReply) => Promise<void>) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    const failure =
      error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? new BatonError('uri_too_long', 'A path parameter is longer than any id this server issues.')
        : error.code === 'FST_ERR_BAD_URL'
          ? new BatonError('malformed_request', 'The path is not valid percent-encoded UTF-8.')
          : new BatonError('internal', 'The server failed while routing this request; nothing was written.');
    // The reply is sent here; nothing awaits it (beforeSend does not reject).
    void beforeSend(request, reply).then(() => sendProblem(reply, failure, source, request.id));
  };
}

const CLIENT_ERRORS: Record<string, { code: ErrorCode; detail: string }> = {
  HPE_HEADER_OVERFLOW: { code: 'headers_too_large', detail: 'The request line and headers are over the 16 KiB limit.' },
  ERR_HTTP_REQUEST_TIMEOUT: { code: 'request_timeout', detail: 'The request did not arrive in full in time.' },
};

/**
 * Node's `clientError` (Fastify's `clientErrorHandler`): a request Node's HTTP parser refuses never
 * reaches a route, so the problem document is written on the socket here, then the socket closes.
 */
export function clientErrorHandler(source: ProblemSource) {
  return (error: Error & { code?: string }, socket: Socket): void => {
    // A reset connection has no one left to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const known = CLIENT_ERRORS[error.code ?? ''];
    const failure = new BatonError(known?.code ?? 'malformed_request', known?.detail ?? 'The request is not well-formed HTTP/1.1.');
    const body = JSON.stringify(toProblem(failure, source.baseUrl, restDialect(source.operations)));
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${failure.status} ${failure.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
          `Content-Type: ${PROBLEM_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy(error);
  };
}
