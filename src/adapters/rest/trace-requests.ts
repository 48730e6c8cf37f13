import { SpanStatusCode } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ServerSpan, Tracing } from '../../tracing.ts';

/**
 * A server span per HTTP request (REST, MCP, GraphQL, SSE, the web app alike), named by method and
 * route template (`GET /api/v1/tasks/:id`, never a raw URL), its parent the request's W3C
 * `traceparent` when it has a valid one. The span is active from the first hook on and again
 * for the handler (which Fastify calls from the body parser's context), so what the request does,
 * database statements included, is its child. It ends when the response closes, which also covers
 * hijacked streams. Tracing off: no hook at all.
 */
export function traceRequests(app: FastifyInstance, tracing: Tracing): void {
  if (!tracing.enabled) return;
  const spans = new WeakMap<FastifyRequest, ServerSpan>();
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    const server = tracing.startServer(route ? `${request.method} ${route}` : request.method, request.headers, {
      'http.request.method': request.method,
      'url.path': request.url.split('?')[0] ?? '/',
      'url.scheme': request.protocol,
      'network.protocol.version': request.raw.httpVersion,
      'client.address': request.ip,
      ...(route ? { 'http.route': route } : {}),
      ...(request.headers['user-agent'] ? { 'user_agent.original': request.headers['user-agent'] } : {}),
    });
    if (!server) return done();
    spans.set(request, server);
    reply.raw.once('close', () => {
      const status = reply.raw.statusCode;
      server.span.setAttribute('http.response.status_code', status);
      if (request.operationName) server.span.setAttribute('baton.operation', request.operationName);
      if (status >= 500) server.span.setStatus({ code: SpanStatusCode.ERROR });
      server.span.end();
    });
    server.run(done);
  });
  app.addHook('preHandler', (request, _reply, done) => {
    const server = spans.get(request);
    if (server) server.run(done);
    else done();
  });
}
