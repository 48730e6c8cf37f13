import { randomUUID } from 'node:crypto';
import { constants } from 'node:zlib';
import fastifyCompress from '@fastify/compress';
import Fastify, { type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { Logger } from 'pino';
import { BatonError, toBatonError } from '../../errors.ts';
import { rateLimitHeaders } from '../../service/authenticate.ts';
import type { Service } from '../../service/service.ts';
import type { MaintenanceReport } from '../../domain/maintenance-report.ts';
import { registerInboundRoutes } from '../inbound/routes.ts';
import { loadSpecPages, registerDocs } from '../docs.ts';
import { registerA2ARoutes } from '../a2a/routes.ts';
import { registerMcpRoute } from '../mcp/http.ts';
import { registerGraphql } from '../graphql/route.ts';
import { buildCompactManifest, buildManifest, manifestView } from '../manifest.ts';
import { registerMetrics } from '../metrics.ts';
import { registerArtifactContentRoute } from './artifact-content.ts';
import { registerCronRoute } from './cron.ts';
import { registerCookies, sessionSecret } from '../identity/cookies.ts';
import { registerIdentityRoutes } from '../identity/routes.ts';
import { registerWeb } from '../web.ts';
import { buildOpenApi } from './openapi.ts';
import { jsonSchemas } from '../json-schema.ts';
import { asV2Document } from './openapi-v2.ts';
import { clientErrorHandler, frameworkErrors } from './framework-errors.ts';
import { sendProblem } from './problem.ts';
import { traceRequests } from './trace-requests.ts';
import { registerOperationRoutes, routeUrl } from './routes.ts';
import { toV2Answer } from '../../operations/tasks/v2-answer.ts';
import { API_VERSIONS, type ApiVersion, apiPrefix } from '../../domain/api-version.ts';

export interface AppOptions {
  /** The process logger; omitted means no request log (tests). */
  readonly logger?: FastifyBaseLogger & Pick<Logger, 'isLevelEnabled'>;
  /** One pass of every maintenance loop, for /cron/keepalive. */
  readonly runMaintenance: () => Promise<MaintenanceReport>;
  /** The release that runs (package.json's version), in /healthz, the manifest and /metrics. */
  readonly version: string;
}

/** The longest path parameter (ids are 30 characters); past it: 414 uri_too_long. */
const MAX_PARAM_LENGTH = 100;
/** The request line plus headers (Node's default); past it: 431 headers_too_large. */
const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Smaller bodies go uncompressed: a claim, a heartbeat or a single task saves a few hundred bytes
 * at most, not worth the CPU on the hottest paths.
 */
const COMPRESS_MIN_BYTES = 1024;

/**
 * What is compressed, besides what mime-db calls compressible (JavaScript, CSS, SVG): text, JSON
 * and XML. Never `text/event-stream` (a compressor holds frames back until its buffer fills), nor
 * octet-stream (artifact bytes, often compressed already), unlike the plugin's default.
 */
const COMPRESSIBLE = /^text\/(?!event-stream)|[+/](?:json|text|xml)(?:;|$)/;

/**
 * For a request refused before any route counted it (by the router, as not found, or while reading
 * its body): count it now and say the budget, as every /api/v1 answer to a request made with a
 * token does. A token that is refused gets no fields (a 401 is not counted). Never rejects.
 */
async function sayBudget(service: Service, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (!request.headers.authorization || !request.url.startsWith('/api/')) return;
  const caller = await service.authenticate(request.headers.authorization).catch(() => undefined);
  if (caller) reply.headers(rateLimitHeaders(caller.budget));
}

/** The HTTP app: the registry's routes plus MCP, GraphQL, manifest, OpenAPI, docs, health, metrics and the web app at `/`. */
export async function buildApp(service: Service, options: AppOptions): Promise<{ app: FastifyInstance; metricsApp: FastifyInstance | undefined }> {
  // Fastify types its instance by the logger it is given; it needs only the base logger.
  const loggerInstance: FastifyBaseLogger | undefined = options.logger;
  const app = Fastify({
    ...(loggerInstance ? { loggerInstance } : { logger: false }),
    bodyLimit: service.config.bodyLimitBytes,
    // Our onResponse hook writes the one request line, with the principal.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => randomUUID(),
    requestIdHeader: false,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkErrors(service, (request, reply) => sayBudget(service, request, reply)),
    clientErrorHandler: clientErrorHandler(service),
    // Node's default, stated: the request line and headers together (past it: 431 headers_too_large).
    http: { maxHeaderSize: MAX_HEADER_BYTES },
  });

  // Before any route: the plugin adds its hook to each route as it is defined. Brotli (quality 4,
  // the plugin's default) or gzip at its fastest level, as the client's Accept-Encoding prefers
  // (Node's fetch, so the typed client, asks for gzip): on a claim of 10 to 50 tasks level 1 took
  // a third of the default level's CPU (40-160 µs) for 5 % more bytes. Request bodies are read as
  // before, never decompressed (a small compressed body could inflate far past the body limit).
  await app.register(fastifyCompress, {
    threshold: COMPRESS_MIN_BYTES,
    encodings: ['br', 'gzip'],
    customTypes: COMPRESSIBLE,
    zlibOptions: { level: constants.Z_BEST_SPEED },
    globalDecompression: false,
  });

  // Cookies and the CSRF check of cookie-authenticated writes, before any route (spec/identity.md).
  await registerCookies(app, service);

  // Declared up front, so setting them does not change each request object's shape.
  app.decorateRequest('operationName', undefined);
  app.decorateRequest('principalId', undefined);
  app.decorateRequest('principalKind', undefined);
  // Set before anything answers, so every response carries them, problems and 404s included; no
  // answer is ever read as another type than it says (the web app's pages add their own headers).
  // Callback-style hooks: an async one costs a promise per request on every route.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
    done();
  });
  traceRequests(app, service.tracing);
  // One line per request, with who made it; the token itself never reaches the log. Below level
  // info the line would be dropped, so the hook is not added (it would build the line for nothing).
  if (options.logger?.isLevelEnabled('info')) {
    app.addHook('onResponse', (request, reply, done) => {
      request.log.info(
        {
          method: request.method,
          url: loggedUrl(request.url),
          status: reply.statusCode,
          ms: Math.round(reply.elapsedTime),
          operation: request.operationName,
          principal: request.principalId,
          principal_kind: request.principalKind,
        },
        'request',
      );
      done();
    });
  }

  app.setErrorHandler(async (error: FastifyError | BatonError, request, reply) => {
    const failure = fromFastifyError(error);
    // A BatonError was already reported where it was made; anything else is a bug worth a log line.
    if (!(error instanceof BatonError) && failure.code === 'internal') request.log.error({ err: error }, 'unhandled error');
    // Refused before the handler ran (the body: 400, 413, 415), so not yet counted.
    if (!(error instanceof BatonError)) await sayBudget(service, request, reply);
    return sendProblem(reply, failure, service, request.id);
  });

  const allowed = methodsByPath(service);
  app.setNotFoundHandler(async (request, reply) => {
    await sayBudget(service, request, reply);
    const path = request.url.split('?')[0] ?? '';
    const methods = allowed.filter(([pattern]) => pattern.test(path)).map(([, method]) => method);
    if (methods.length > 0) {
      reply.header('allow', methods.join(', '));
      return sendProblem(reply, new BatonError('method_not_allowed', `${request.method} is not allowed on ${path}; use ${methods.join(' or ')}.`), service, request.id);
    }
    return sendProblem(reply, new BatonError('route_not_found', `No route ${request.method} ${path}.`), service, request.id);
  });

  // Only JSON bodies: a text/plain body is 415, not a string that fails validation.
  app.removeContentTypeParser('text/plain');
  registerOperationRoutes(app, service);
  registerArtifactContentRoute(app, service);
  // Each operation's JSON Schemas, derived once for GraphQL, the OpenAPI documents and MCP.
  const schemas = jsonSchemas(service.config);
  registerGraphql(app, service, schemas);
  // Built once: v2's document is v1's rewritten, and the spec's limits table reads v1's.
  const openapi = buildOpenApi(service.operations, service.config, schemas);
  const documents: Record<ApiVersion, string> = { 1: JSON.stringify(openapi), 2: JSON.stringify(asV2Document(openapi, schemas)) };
  for (const version of API_VERSIONS) registerDiscovery(app, service, version, documents[version], options.version);
  app.get('/healthz', async () => ({ status: 'ok', version: options.version }));
  app.get('/readyz', async () => {
    await service.checkReady();
    return { status: 'ready' };
  });
  registerCronRoute(app, service, options.runMaintenance);
  registerIdentityRoutes(app, service);
  await registerInboundRoutes(app, service);
  const pages = await loadSpecPages(service, openapi);
  registerDocs(app, service, pages);
  registerMcpRoute(app, service, pages, schemas);
  registerA2ARoutes(app, service);
  const metricsApp = await registerMetrics(app, service, options.version);
  const webMissing = await registerWeb(app);
  if (webMissing) app.log.warn(webMissing);
  return { app, metricsApp };
}

/**
 * A version's discovery: `GET /api/vN` (the manifest) and `GET /api/vN/openapi.json`. Both public;
 * a request made with a token is counted and told its budget.
 */
function registerDiscovery(app: FastifyInstance, service: Service, version: ApiVersion, openapi: string, release: string): void {
  const prefix = apiPrefix(version);
  app.get(`${prefix}/openapi.json`, async (request, reply) => {
    if (request.headers.authorization) reply.headers(rateLimitHeaders((await service.authenticate(request.headers.authorization)).budget));
    return reply.type('application/json; charset=utf-8').send(openapi);
  });
  app.get(prefix, async (request, reply) => {
    const secret = sessionSecret(request);
    const caller = request.headers.authorization || secret ? await service.authenticate(request.headers.authorization, secret) : undefined;
    if (caller) reply.headers(rateLimitHeaders(caller.budget));
    const principal = caller?.principal;
    const view = manifestView((request.query as { view?: string }).view, principal);
    const manifest = view === 'compact' && principal ? buildCompactManifest(service, principal, version) : buildManifest(service, principal, version);
    // v2's next_actions (the ready claim) in its words: the same conversion as its answers'.
    const shown = version === 1 ? manifest : toV2Answer(manifest, { principalId: principal?.id ?? '', selected: true });
    return reply.type('application/json; charset=utf-8').send(JSON.stringify({ ...(shown as object), release }));
  });
}

/** Fastify's own failures (body parsing, limits) become catalogue errors; anything else is `internal`. */
/** Query parameters that carry a credential: an OIDC callback's authorization code, a notification link's token. */
const SECRET_PARAMS = /([?&](?:code|link)=)[^&#]*/g;

/** The URL as the request log writes it: those parameters' values left out. */
function loggedUrl(url: string): string {
  return url.replace(SECRET_PARAMS, '$1…');
}

function fromFastifyError(error: FastifyError | BatonError): BatonError {
  if (error instanceof BatonError) return error;
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BatonError('payload_too_large', 'The request body is over the size limit of this route.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new BatonError('unsupported_media_type', 'The request body has a content type this route does not accept.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new BatonError('malformed_json', 'Content-Type is application/json but the body is empty; send `{}` or drop the header.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new BatonError('malformed_json', `The body is not valid JSON: ${error.message}`);
    default:
      break;
  }
  // JSON syntax errors and prototype-poisoning refusals arrive as plain 400s from the body parser.
  if (error.code === 'FST_CSRF_MISSING_SECRET' || error.code === 'FST_CSRF_INVALID_TOKEN') {
    return new BatonError('csrf_failed', 'A write with the session cookie came without a valid x-csrf-token header (a cross-site request, or a page from before the session began).');
  }
  if (error.statusCode === 400 && (error instanceof SyntaxError || /JSON|prototype/i.test(error.message))) {
    return new BatonError('malformed_json', `The body is not valid JSON: ${error.message}`);
  }
  return toBatonError(error);
}

function methodsByPath(service: Service): [RegExp, string][] {
  return API_VERSIONS.flatMap((version) => service.operations.map((op): [RegExp, string] => [new RegExp(`^${routeUrl(op, version).replace(/:\w+/g, '[^/]+')}/?$`), op.http.method]));
}
