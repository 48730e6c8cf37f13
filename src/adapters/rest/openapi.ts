import type { z } from 'zod';
import type { Config } from '../../config.ts';
import { problemSchema } from '../../errors.ts';
import { type Operation, operationParts, parameterLocation, pathParameters, takesExpectedVersion } from '../../operations/define-operation.ts';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import { type JsonSchema, jsonSchema } from '../json-schema.ts';
import { PRECONDITION_MAX } from './if-match.ts';
import { API_PREFIX } from './routes.ts';

const problemResponse = {
  description: 'A problem document (RFC 9457).',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

/** The OpenAPI 3.1 document, generated from the same Zod schemas that validate requests. */
export function buildOpenApi(operations: readonly Operation[], config: Config) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = `${API_PREFIX}${op.http.path}`;
    paths[path] ??= {};
    paths[path][op.http.method.toLowerCase()] = pathItem(op, config);
  }
  Object.assign(paths, servicePaths());
  return {
    openapi: '3.1.0',
    info: {
      title: 'Baton API',
      version: 'v1',
      description: 'Task coordination for humans and software agents. Generated from the operation registry; see /spec/index.md.',
    },
    servers: [{ url: config.publicUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'A Baton token: bat_…' },
        cron: { type: 'http', scheme: 'bearer', description: 'CRON_SECRET (only /cron/keepalive).' },
      },
      schemas: { Problem: jsonSchema(problemSchema, 'output') },
      headers: HEADERS,
    },
  };
}

const header = (description: string) => ({ description, schema: { type: 'string' } });
/** The response headers Baton sends (declared once, referenced by every operation). */
const HEADERS = {
  RateLimit: header('IETF RateLimit fields: `"default";r=<remaining>;t=<seconds to reset>`. On every response to a request made with a token.'),
  'RateLimit-Policy': header('`"default";q=<limit>;w=<window seconds>`. On every response to a request made with a token.'),
  ETag: header('The resource version, quoted: send it back as If-Match.'),
  'Idempotency-Replayed': header('`true` when the answer is the stored response of an earlier request with the same Idempotency-Key.'),
  Location: header('The created resource (201), or the pending approval (202).'),
  'Retry-After': header('Seconds to wait before retrying (429, 409 idempotency_in_progress, 503).'),
  'WWW-Authenticate': header('`Bearer realm="baton"`, with `error="invalid_token"` when a token was refused (every 401).'),
};
const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
const RATE_HEADERS = { RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') };

/** A problem response for one status, with the headers that status carries. */
function problemFor(status: number) {
  // A 401 was not counted, so it carries the challenge instead of the budget.
  if (status === 401) return { ...problemResponse, headers: { 'WWW-Authenticate': ref('WWW-Authenticate') } };
  const retry = status === 429 || status === 503 || status === 409 ? { 'Retry-After': ref('Retry-After') } : {};
  return { ...problemResponse, headers: { ...RATE_HEADERS, ...retry } };
}

/** The error statuses every operation may answer: authentication, scope, rate limit, server. */
const COMMON_ERRORS = [401, 403, 429, 500, 503];

/** The error statuses of one operation beyond the common ones. */
function errorStatuses(op: Operation): number[] {
  const statuses = new Set(COMMON_ERRORS);
  if (op.kind !== 'stream' && (Object.keys(op.input.shape).length > 0 || op.kind === 'write')) statuses.add(400);
  if (pathParameters(op.http.path).length > 0) statuses.add(404);
  if (op.kind === 'write') {
    for (const s of [409, 422]) statuses.add(s);
    if (op.http.method !== 'DELETE') for (const s of [413, 415]) statuses.add(s);
  }
  return [...statuses].sort((a, b) => a - b);
}

const json = (description: string, schema: JsonSchema = { type: 'object' }) => ({ description, content: { 'application/json': { schema } } });

/** The routes outside the registry, documented so a generated client sees every route Baton serves. */
function servicePaths(): Record<string, Record<string, unknown>> {
  const open = (summary: string, description: string, responses: Record<string, unknown>, tag = 'service') => ({
    summary,
    description,
    tags: [tag],
    security: [{}, { bearer: [] }],
    responses,
  });
  return {
    [API_PREFIX]: {
      get: {
        ...open('The capability manifest', 'Compact for an agent token, full otherwise; `?view=compact|full` chooses (spec/api.md).', { '200': { ...json('The manifest.'), headers: RATE_HEADERS }, '400': problemFor(400), '401': problemFor(401) }, 'meta'),
        operationId: 'manifest',
        parameters: [{ name: 'view', in: 'query', required: false, schema: { type: 'string', enum: ['compact', 'full'] } }],
      },
    },
    [`${API_PREFIX}/openapi.json`]: { get: { ...open('This OpenAPI document', 'Generated from the operation registry.', { '200': { ...json('OpenAPI 3.1.'), headers: RATE_HEADERS }, '401': problemFor(401) }, 'meta'), operationId: 'openapi' } },
    '/healthz': { get: { ...open('Liveness', 'The process answers, saying which release runs.', { '200': json('`{"status":"ok","version":"0.2.0"}`') }), operationId: 'healthz', security: [] } },
    '/readyz': { get: { ...open('Readiness', 'The database answers.', { '200': json('`{"status":"ready"}`'), '503': problemFor(503) }), operationId: 'readyz', security: [] } },
    '/metrics': {
      get: {
        ...open('Prometheus metrics', 'Text exposition format. Needs a token with `metrics:read` (or `agents:admin`); BATON_METRICS_ADDRESS serves it without one elsewhere.', {
          '200': { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
          '401': problemFor(401),
          '403': problemFor(403),
        }),
        operationId: 'metrics',
        security: [{ bearer: [] }],
      },
    },
    '/graphql': {
      post: {
        ...open('GraphQL', 'The registry as GraphQL (spec/graphql.md); errors carry the problem document in `extensions`.', { '200': { ...json('A GraphQL response.'), headers: RATE_HEADERS }, '400': problemFor(400), '401': problemFor(401), '429': problemFor(429) }, 'graphql'),
        operationId: 'graphql',
        security: [{ bearer: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object', required: ['query'], properties: { query: { type: 'string' }, variables: { type: 'object' }, operationName: { type: 'string' } } } } } },
      },
    },
    '/mcp': {
      post: {
        ...open('MCP (Streamable HTTP)', 'JSON-RPC per the Model Context Protocol (spec/mcp.md); `?toolsets=agent,admin`, `?output_schemas=1`.', { '200': { ...json('A JSON-RPC response, or an SSE stream of them.'), headers: RATE_HEADERS }, '400': problemFor(400), '401': problemFor(401), '403': problemFor(403), '429': problemFor(429) }, 'mcp'),
        operationId: 'mcp',
        security: [{ bearer: [] }],
        requestBody: { required: true, content: { 'application/json': { schema: { type: 'object' } } } },
      },
    },
    '/webhooks/payments': { post: { ...open('Inbound payments webhook', 'Stripe-signed events (spec/inbound.md).', { '200': json('Recorded (or a duplicate).'), '400': problemFor(400), '503': problemFor(503) }, 'inbound'), operationId: 'inboundPayments', security: [] } },
    '/webhooks/auth': { post: { ...open('Inbound auth-provider webhook', 'Svix-signed events (spec/inbound.md).', { '200': json('Recorded (or a duplicate).'), '400': problemFor(400), '503': problemFor(503) }, 'inbound'), operationId: 'inboundAuth', security: [] } },
    '/cron/keepalive': { get: { ...open('Keep-alive cron', 'Bearer CRON_SECRET; runs one pass of every maintenance loop (spec/inbound.md).', { '200': json('A report of what each loop did.'), '401': problemFor(401), '503': problemFor(503) }, 'inbound'), operationId: 'cronKeepalive', security: [{ cron: [] }] } },
  };
}

/** SSE: the body is text; each frame's `data:` line is one JSON item, described by `x-item-schema`. */
function streamContent(item: z.ZodType) {
  return {
    'text/event-stream': {
      schema: { type: 'string', description: 'Frames: `id: <position>`, `event: <name>`, `data: <one JSON item>`; `retry:` once; `: ping` comments.' },
      'x-item-schema': jsonSchema(item, 'output'),
    },
  };
}

function pathItem(op: Operation, config: Config) {
  const input = jsonSchema(op.input, 'input', config) as { properties?: Record<string, JsonSchema>; required?: string[] };
  const properties = input.properties ?? {};
  const required = new Set(input.required ?? []);
  const parameters: unknown[] = [];
  const body: { properties: Record<string, JsonSchema>; required: string[] } = { properties: {}, required: [] };
  for (const [name, schema] of Object.entries(properties)) {
    const location = parameterLocation(op, name);
    if (location === 'body') {
      body.properties[name] = schema;
      if (required.has(name)) body.required.push(name);
    } else {
      const { description, ...rest } = schema;
      // A list in the query is comma-separated (`?status=todo,blocked`); repeating the parameter works too.
      const style = rest['type'] === 'array' ? { style: 'form', explode: false } : {};
      parameters.push({ name, in: location, required: location === 'path' || required.has(name), schema: rest, ...style, ...(description ? { description } : {}) });
    }
  }
  if (op.kind === 'write') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      description: 'Unique per request; resend the same key to retry safely.',
    });
    if (takesExpectedVersion(op)) {
      parameters.push({ name: 'If-Match', in: 'header', required: false, schema: { type: 'string', maxLength: PRECONDITION_MAX }, description: 'The ETag you read; a mismatch is 409 conflict_version.' });
    }
  } else if (op.kind === 'stream') {
    parameters.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string', maxLength: 30 }, description: 'Resume after this event id (EventSource clients send it on reconnect); wins over `since`.' });
  } else if (op.version) {
    parameters.push({ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string', maxLength: PRECONDITION_MAX }, description: 'An ETag; answers 304 when unchanged.' });
  }
  const success = String(op.http.successStatus ?? 200);
  const responses: Record<string, unknown> = {
    [success]: {
      description: op.summary,
      content: op.kind === 'stream' ? streamContent(op.output) : { 'application/json': { schema: jsonSchema(op.output, 'output') } },
      headers: {
        ...RATE_HEADERS,
        ...(op.version ? { ETag: ref('ETag') } : {}),
        ...(op.kind === 'write' ? { 'Idempotency-Replayed': ref('Idempotency-Replayed') } : {}),
        ...(success === '201' ? { Location: ref('Location') } : {}),
      },
    },
    ...Object.fromEntries(errorStatuses(op).map((status) => [String(status), problemFor(status)])),
    default: problemResponse,
  };
  if (op.kind === 'read' && op.version) responses['304'] = { description: 'Not modified (If-None-Match matched).' };
  if (op.approval !== 'none') {
    responses['202'] = {
      headers: { ...RATE_HEADERS, Location: ref('Location'), 'Idempotency-Replayed': ref('Idempotency-Replayed') },
      description: `Accepted, not run: ${op.approval} operations wait for a human's approval (a human with approvals:decide runs them directly).`,
      content: { 'application/json': { schema: jsonSchema(approvalOutput, 'output') } },
    };
  }
  const hasBody = op.kind === 'write' && op.http.method !== 'DELETE';
  return {
    operationId: op.name,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [operationParts(op.name)[0]],
    ...(op.scope === null ? {} : { 'x-required-scope': op.scope }),
    'x-approval': op.approval,
    parameters,
    ...(hasBody
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { type: 'object', properties: body.properties, required: body.required, additionalProperties: false },
              },
            },
          },
        }
      : {}),
    responses,
  };
}
