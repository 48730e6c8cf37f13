import { STATUS_CODES } from 'node:http';
import type { JsonSchema } from '../json-schema.ts';

// The parts of the OpenAPI document that many operations share, each declared once under `components`.

const PROBLEM_RESPONSE = {
  description: 'A problem document (RFC 9457).',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};
const header = (description: string) => ({ description, schema: { type: 'string' } });
/** The response headers Baton sends (declared once, referenced by every operation). */
export const HEADERS = {
  RateLimit: header('IETF RateLimit fields: `"default";r=<remaining>;t=<seconds to reset>`. On every response to a request made with a token.'),
  'RateLimit-Policy': header('`"default";q=<limit>;w=<window seconds>`. On every response to a request made with a token.'),
  ETag: header('The resource version, quoted: send it back as If-Match.'),
  'Idempotency-Replayed': header('`true` when the answer is the stored response of an earlier request with the same Idempotency-Key.'),
  Location: header('The created resource (201), or the pending approval (202).'),
  'Retry-After': header('Seconds to wait before retrying (429, 409 idempotency_in_progress, 503).'),
  'WWW-Authenticate': header('`Bearer realm="baton"`, with `error="invalid_token"` when a token was refused (every 401).'),
};
export const ref = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });
export const RATE_HEADERS = { RateLimit: ref('RateLimit'), 'RateLimit-Policy': ref('RateLimit-Policy') };

/** Every error status an answer may have, each a named response (`#/components/responses/Problem<status>`). */
/** (The routes outside the registry name their statuses; registry operations answer `default`.) */
const ERROR_STATUSES = [400, 401, 403, 404, 429, 503];

/**
 * A problem response for one status, with the headers that status carries. Its description is
 * HTTP's reason phrase (`Not Found`), as a success answer's is (`OK`): the schema says the rest.
 */
function problemResponseFor(status: number) {
  const response = { ...PROBLEM_RESPONSE, description: STATUS_CODES[status] ?? PROBLEM_RESPONSE.description };
  // A 401 was not counted, so it carries the challenge instead of the budget.
  if (status === 401) return { ...response, headers: { 'WWW-Authenticate': ref('WWW-Authenticate') } };
  const retry = status === 429 || status === 503 || status === 409 ? { 'Retry-After': ref('Retry-After') } : {};
  return { ...response, headers: { ...RATE_HEADERS, ...retry } };
}

/** The problem responses, by status (`Problem` for any other). */
export function problemResponses() {
  return { Problem: PROBLEM_RESPONSE, ...Object.fromEntries(ERROR_STATUSES.map((status) => [`Problem${status}`, problemResponseFor(status)])) };
}

/** The problem response of one status, by reference. */
export const problemFor = (status: number) => ({ $ref: `#/components/responses/Problem${status}` });
export const PROBLEM = { $ref: '#/components/responses/Problem' };

/** A JSON response. */
export const json = (description: string, schema: JsonSchema = { type: 'object' }) => ({ description, content: { 'application/json': { schema } } });
/** A reference to a component schema. */
export const schemaRef = (name: string) => ({ $ref: `#/components/schemas/${name}` });
