import type { z } from 'zod';
import { problemSchema } from '../../errors.ts';
import { type Operation, operationParts, parameterLocation, takesExpectedVersion } from '../../operations/define-operation.ts';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import { type JsonSchema, jsonSchema } from '../json-schema.ts';
import { API_PREFIX } from './routes.ts';

const problemResponse = {
  description: 'A problem document (RFC 9457).',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

/** The OpenAPI 3.1 document, generated from the same Zod schemas that validate requests. */
export function buildOpenApi(operations: readonly Operation[], baseUrl: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations) {
    const path = `${API_PREFIX}${op.http.path}`;
    paths[path] ??= {};
    paths[path][op.http.method.toLowerCase()] = pathItem(op);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Baton API',
      version: 'v1',
      description: 'Task coordination for humans and software agents. Generated from the operation registry; see /spec/index.md.',
    },
    servers: [{ url: baseUrl }],
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'A Baton token: bat_…' } },
      schemas: { Problem: jsonSchema(problemSchema, 'output') },
    },
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

function pathItem(op: Operation) {
  const input = jsonSchema(op.input, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
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
      parameters.push({ name, in: location, required: location === 'path' || required.has(name), schema: rest, ...(description ? { description } : {}) });
    }
  }
  if (op.kind === 'write') {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: true,
      schema: { type: 'string', maxLength: 255 },
      description: 'Unique per request; resend the same key to retry safely.',
    });
    if (takesExpectedVersion(op)) {
      parameters.push({ name: 'If-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'The ETag you read; a mismatch is 409 conflict_version.' });
    }
  } else if (op.kind === 'stream') {
    parameters.push({ name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' }, description: 'Resume after this event id (EventSource clients send it on reconnect); wins over `since`.' });
  } else if (op.version) {
    parameters.push({ name: 'If-None-Match', in: 'header', required: false, schema: { type: 'string' }, description: 'An ETag; answers 304 when unchanged.' });
  }
  const success = String(op.http.successStatus ?? 200);
  const responses: Record<string, unknown> = {
    [success]: {
      description: op.summary,
      content: op.kind === 'stream' ? streamContent(op.output) : { 'application/json': { schema: jsonSchema(op.output, 'output') } },
      ...(op.version ? { headers: { ETag: { schema: { type: 'string' }, description: 'The resource version, quoted.' } } } : {}),
    },
    default: problemResponse,
  };
  if (op.kind === 'read' && op.version) responses['304'] = { description: 'Not modified (If-None-Match matched).' };
  if (op.approval !== 'none') {
    responses['202'] = {
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
