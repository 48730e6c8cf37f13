import type { z } from 'zod';
import type { Config } from '../../config.ts';
import { type Operation, operationParts, parameterLocation, pathParameters, takesExpectedVersion } from '../../operations/define-operation.ts';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import type { JsonSchema, JsonSchemas } from '../json-schema.ts';
import { outputSchemas } from './openapi-components.ts';
import { HEADERS, PROBLEM, problemResponses, RATE_HEADERS, ref } from './openapi-parts.ts';
import { serviceResponses, servicePaths } from './openapi-service-paths.ts';
import { sharePages } from './openapi-pages.ts';
import { shareSchemas } from './openapi-shared-schemas.ts';
import { terseSchemas } from './openapi-terse.ts';
import { PRECONDITION_MAX } from './if-match.ts';
import { API_PREFIX } from './routes.ts';

const APPROVAL = 'approval';

/** The OpenAPI 3.1 document (v1's; v2's is derived from it by `asV2Document`), generated from the same Zod schemas that validate requests. */
export function buildOpenApi(operations: readonly Operation[], config: Config, derived: JsonSchemas) {
  // Every output schema in one conversion, so the shared ones are components the operations refer to.
  const outputs = outputSchemas(new Map<string, z.ZodType>([[APPROVAL, approvalOutput], ...operations.map((op) => [op.name, op.output] as const)]));
  const outputOf = (key: string): JsonSchema => outputs.schemas.get(key) ?? {};
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = `${API_PREFIX}${op.http.path}`;
    paths[path] ??= {};
    paths[path][op.http.method.toLowerCase()] = pathItem(op, derived, outputOf);
  }
  const schemas = outputs.components;
  const shared = shareParameters(paths);
  // Before the answers: an answer whose schema became a component may then be one named response.
  shareSchemas({ paths, components: { schemas } });
  sharePages({ paths, components: { schemas } });
  const sharedResponses = shareResponses(paths);
  // Last: the names above are part of v1, and a shorter form must not move a schema under a sharing threshold.
  terseSchemas({ paths, schemas, shared });
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
      schemas,
      responses: { ...problemResponses(), ...sharedResponses, ...serviceResponses() },
      parameters: { ...HEADER_PARAMETERS, ...shared },
      headers: HEADERS,
    },
  };
}

/** What an id's prefix names, for the name of a shared id parameter (`TaskId`). */
const RESOURCE_OF_PREFIX: Record<string, string> = {
  tsk: 'Task', evt: 'Event', agt: 'Agent', tok: 'Token', lea: 'Lease', apr: 'Approval', whk: 'Webhook', dlv: 'Delivery', art: 'Artifact',
  cmt: 'Comment', sch: 'Schedule', ses: 'Session', ask: 'Ask', inb: 'InboxItem', res: 'Reservation', bdg: 'Budget', tpl: 'Template',
};

/**
 * Moves the path and query parameters that several operations declare alike (an id in the path, a
 * page's `limit` and `cursor`) to `#/components/parameters/<Name>`, each operation referring to it:
 * named `<Resource>Id` for an id in the path, after the parameter otherwise. A parameter whose name
 * is taken by a more common one stays where it is. Answers the moved parameters by name.
 */
function shareParameters(paths: Record<string, Record<string, unknown>>): Record<string, unknown> {
  const operations = Object.values(paths).flatMap((item) => Object.values(item) as { parameters: unknown[] }[]);
  const uses = new Map<string, { parameter: { name: string; in: string; schema: { pattern?: string } }; count: number }>();
  for (const op of operations) {
    for (const parameter of op.parameters) {
      if ((parameter as { $ref?: string }).$ref) continue;
      const key = JSON.stringify(parameter);
      const use = uses.get(key) ?? { parameter: parameter as { name: string; in: string; schema: { pattern?: string } }, count: 0 };
      uses.set(key, { ...use, count: use.count + 1 });
    }
  }
  const names = new Map<string, string>();
  const shared: Record<string, unknown> = {};
  for (const [key, { parameter, count }] of [...uses].sort(([, a], [, b]) => b.count - a.count)) {
    if (count < 2) break;
    const prefix = parameter.in === 'path' ? /^\^([a-z]{3})_/.exec(parameter.schema.pattern ?? '')?.[1] : undefined;
    const resource = prefix ? RESOURCE_OF_PREFIX[prefix] : undefined;
    const name = resource ? `${resource}Id` : parameter.name.replace(/(^|_)(\w)/g, (_, __: string, c: string) => c.toUpperCase());
    if (name in shared || name in HEADER_PARAMETERS) continue;
    shared[name] = parameter;
    names.set(key, name);
  }
  for (const op of operations) {
    op.parameters = op.parameters.map((parameter) => {
      const name = names.get(JSON.stringify(parameter));
      return name ? { $ref: `#/components/parameters/${name}` } : parameter;
    });
  }
  return shared;
}

/**
 * Moves the answers that several operations give alike (a task written, an approval asked for, the
 * 304 of a versioned read) to `#/components/responses/<Name>`, each operation referring to it: named
 * after the answer's schema and what it is (`TaskWritten`, `ApprovalAccepted`), numbered on
 * when two differ only in their headers. An answer of its own operation's schema stays in place.
 * Answers the moved responses by name.
 */
function shareResponses(paths: Record<string, Record<string, unknown>>): Record<string, unknown> {
  type Answer = { description: string; content?: Record<string, { schema?: { $ref?: string } }>; headers?: Record<string, unknown> };
  const operations = Object.values(paths).flatMap((item) => Object.values(item) as { responses: Record<string, Answer | { $ref: string }> }[]);
  const uses = new Map<string, { status: string; answer: Answer; count: number }>();
  for (const op of operations) {
    for (const [status, answer] of Object.entries(op.responses)) {
      if ('$ref' in answer) continue;
      const key = JSON.stringify(answer);
      uses.set(key, { status, answer, count: (uses.get(key)?.count ?? 0) + 1 });
    }
  }
  const names = new Map<string, string>();
  const shared: Record<string, unknown> = {};
  for (const [key, { status, answer, count }] of uses) {
    const schema = answer.content?.['application/json']?.schema?.$ref?.replace('#/components/schemas/', '');
    if (count < 2 || (schema === undefined && status !== '304')) continue;
    const what = status === '304' ? 'NotModified' : status === '201' ? 'Created' : status === '202' ? 'Accepted' : answer.headers?.['Idempotency-Replayed'] ? 'Written' : 'Read';
    const base = `${schema ?? ''}${what}`;
    let name = base;
    for (let n = 2; name in shared; n += 1) name = `${base}${n}`;
    shared[name] = answer;
    names.set(key, name);
  }
  for (const op of operations) {
    for (const [status, answer] of Object.entries(op.responses)) {
      const name = names.get(JSON.stringify(answer));
      if (name) op.responses[status] = { $ref: `#/components/responses/${name}` };
    }
  }
  return shared;
}

/** The request headers that many operations take, as `#/components/parameters/<name>`. */
const HEADER_PARAMETERS = {
  IdempotencyKey: { name: 'Idempotency-Key', in: 'header', required: true, schema: { type: 'string', minLength: 1, maxLength: 255 }, description: 'Unique per request; resend the same key to retry safely.' },
  IfMatch: { name: 'If-Match', in: 'header', schema: { type: 'string', maxLength: PRECONDITION_MAX }, description: 'The ETag you read; a mismatch is 409 conflict_version.' },
  IfNoneMatch: { name: 'If-None-Match', in: 'header', schema: { type: 'string', maxLength: PRECONDITION_MAX }, description: 'An ETag; answers 304 when unchanged.' },
  LastEventId: { name: 'Last-Event-ID', in: 'header', schema: { type: 'string', maxLength: 30 }, description: 'Resume after this event id (EventSource clients send it on reconnect); wins over `since`.' },
};
const parameterRef = (name: keyof typeof HEADER_PARAMETERS) => ({ $ref: `#/components/parameters/${name}` });

/**
 * The error statuses every operation names: authentication, scope, rate limit. A server's own
 * failure (500, 503) may answer any request too: every operation's `default` response, the
 * problem document, says it, so it is not repeated per status.
 */
const COMMON_ERRORS = [401, 403, 429];

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

/** A `download` read asked for by Accept: every page of the window, streamed, one row per line (src/adapters/rest/download.ts). */
const DOWNLOAD_CONTENT = {
  'application/x-ndjson': { schema: { type: 'string', description: 'Every page: one `data` row per line.' } },
  'text/csv': { schema: { type: 'string', description: 'Every page: the `columns` header, then one row per line.' } },
};

/** SSE: the body is text; each frame's `data:` line is one JSON item, described by `x-item-schema`. */
function streamContent(item: JsonSchema) {
  return {
    'text/event-stream': {
      schema: { type: 'string', description: 'Frames: `id: <position>`, `event: <name>`, `data: <one JSON item>`; `retry:` once; `: ping` comments.' },
      'x-item-schema': item,
    },
  };
}

function pathItem(op: Operation, derived: JsonSchemas, outputOf: (key: string) => JsonSchema) {
  // A copy: the document's passes below rewrite what they share in place.
  const input = structuredClone(derived.input(op.input)) as { properties?: Record<string, JsonSchema>; required?: string[] };
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
      // `required` is stated only when true: false is OpenAPI's default.
      const needed = location === 'path' || required.has(name) ? { required: true } : {};
      parameters.push({ name, in: location, ...needed, schema: rest, ...style, ...(description ? { description } : {}) });
    }
  }
  // The request headers many operations share are declared once (`HEADER_PARAMETERS`) and referred to.
  if (op.kind === 'write') {
    parameters.push(parameterRef('IdempotencyKey'));
    if (takesExpectedVersion(op)) parameters.push(parameterRef('IfMatch'));
  } else if (op.kind === 'stream') {
    parameters.push(parameterRef('LastEventId'));
  } else if (op.version) {
    parameters.push(parameterRef('IfNoneMatch'));
  }
  const success = String(op.http.successStatus ?? 200);
  const responses: Record<string, unknown> = {
    [success]: {
      // The operation's summary says what it does, the answer's schema what comes back; HTTP's own reason phrase names the status.
      description: success === '201' ? 'Created' : 'OK',
      content: op.kind === 'stream' ? streamContent(outputOf(op.name)) : { 'application/json': { schema: outputOf(op.name) }, ...(op.http.download ? DOWNLOAD_CONTENT : {}) },
      headers: {
        ...RATE_HEADERS,
        ...(op.version ? { ETag: ref('ETag') } : {}),
        ...(op.kind === 'write' ? { 'Idempotency-Replayed': ref('Idempotency-Replayed') } : {}),
        ...(success === '201' ? { Location: ref('Location') } : {}),
      },
    },
    // Every refusal and failure is the same problem document: one `default` answer (any status not
    // listed), the statuses this operation may give listed in `x-error-statuses` (spec/errors.md says
    // what each code means). A `4XX` beside it would say the same again, in every operation.
    default: PROBLEM,
  };
  if (op.kind === 'read' && op.version) responses['304'] = { description: 'Not modified (If-None-Match matched).' };
  if (op.approval !== 'none') {
    responses['202'] = {
      headers: { ...RATE_HEADERS, Location: ref('Location'), 'Idempotency-Replayed': ref('Idempotency-Replayed') },
      // One answer for every gated class (the operation's `x-approval` names it), so the document states it once.
      description: "Accepted, not run: it waits for a human's approval (a human with approvals:decide runs it directly).",
      content: { 'application/json': { schema: outputOf(APPROVAL) } },
    };
  }
  const hasBody = op.kind === 'write' && op.http.method !== 'DELETE';
  return {
    operationId: op.name,
    summary: op.summary,
    ...(op.description ? { description: op.description } : {}),
    tags: [operationParts(op.name)[0]],
    ...(op.scope === null ? {} : { 'x-required-scope': op.scope }),
    // Only a gated operation says so; the rest (most) are `none`, which the document leaves unsaid.
    ...(op.approval === 'none' ? {} : { 'x-approval': op.approval }),
    'x-error-statuses': errorStatuses(op),
    parameters,
    ...(hasBody
      ? {
          requestBody: {
            // A body whose every member is optional may be left out (a claim of the next task with the
            // defaults): `required` is stated only when true, false being OpenAPI's default.
            ...(body.required.length > 0 ? { required: true } : {}),
            content: {
              'application/json': {
                schema: { type: 'object', properties: body.properties, ...(body.required.length > 0 ? { required: body.required } : {}), additionalProperties: false },
              },
            },
          },
        }
      : {}),
    responses,
  };
}
