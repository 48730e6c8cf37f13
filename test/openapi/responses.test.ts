import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../src/errors.ts';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { fetchDocument, matchTemplate, type OpenApiDocument, resolveResponse, schemaCompiler } from './openapi-document.ts';
import { type Exchange, type Walk, walkEveryOperation } from './walk.ts';

let t: TestServer;
let document: OpenApiDocument;
let walk: Walk;
let exchanges: Exchange[];
beforeAll(async () => {
  // A back-off long enough that the walk meets it (backoff_pending).
  t = await startTestServer({ retryBackoffS: [300] });
  document = await fetchDocument(t);
  walk = await walkEveryOperation(t);
  exchanges = walk.exchanges;
}, 120_000);
afterAll(() => t.close());

const mediaType = (contentType: string | undefined) => contentType?.split(';')[0]?.trim().toLowerCase();
const isJson = (contentType: string | undefined) => /^application\/(.+\+)?json$/.test(mediaType(contentType) ?? '');

function parsed(exchange: Exchange): unknown {
  return isJson(exchange.contentType) && exchange.body !== '' ? (JSON.parse(exchange.body) as unknown) : undefined;
}

function problemCode(exchange: Exchange): ErrorCode | undefined {
  const body = parsed(exchange);
  return exchange.status >= 400 && body && typeof body === 'object' && 'code' in body ? (body.code as ErrorCode) : undefined;
}

/** Operations that take a `cursor`: each must answer with a bounded page. */
const paginated = operations.filter((op) => 'cursor' in op.input.shape);

/** Successful answers of paginated operations, and any other success carrying a top-level `data` array. */
function lists(): { exchange: Exchange; body: Record<string, unknown> }[] {
  const pageTemplates = new Set(paginated.map((op) => `${op.http.method} /api/v1${op.http.path}`));
  return exchanges.flatMap((exchange) => {
    if (exchange.status < 200 || exchange.status >= 300) return [];
    const body = parsed(exchange);
    const isPage = pageTemplates.has(`${exchange.method} ${matchTemplate(document, exchange.method, exchange.url) ?? ''}`);
    const hasData = body !== null && typeof body === 'object' && 'data' in body && Array.isArray(body.data);
    if (!isPage && !hasData) return [];
    return [{ exchange, body: (body ?? {}) as Record<string, unknown> }];
  });
}

function longestArray(value: unknown): number {
  if (Array.isArray(value)) return Math.max(value.length, ...value.map(longestArray));
  if (value && typeof value === 'object') return Math.max(0, ...Object.values(value).map(longestArray));
  return 0;
}

describe('every response body of every route validates against the OpenAPI document', () => {
  it('answered every step of the walk as scripted', () => {
    expect(walk.surprises).toEqual([]);
  });

  it('matches the declared status, media type and schema', () => {
    const compile = schemaCompiler(document);
    const failures: string[] = [];
    for (const exchange of exchanges) {
      const label = `${exchange.method} ${exchange.url} → ${exchange.status}`;
      const template = matchTemplate(document, exchange.method, exchange.url);
      const method = exchange.method.toLowerCase();
      const responses = template === undefined ? undefined : document.paths[template]?.[method]?.responses;
      if (template === undefined || responses === undefined) {
        failures.push(`${label}: no operation in the document`);
        continue;
      }
      const declared = String(exchange.status) in responses ? String(exchange.status) : exchange.status >= 400 && 'default' in responses ? 'default' : undefined;
      const declaredResponse = declared === undefined ? undefined : responses[declared];
      if (declared === undefined || declaredResponse === undefined) {
        failures.push(`${label}: status not declared (declared: ${Object.keys(responses).join(', ')})`);
        continue;
      }
      const { response, path } = resolveResponse(document, ['paths', template, method, 'responses', declared], declaredResponse);
      if (!response.content) {
        if (exchange.body !== '') failures.push(`${label}: declared without content, but has a body`);
        continue;
      }
      const type = mediaType(exchange.contentType);
      if (type === undefined || !(type in response.content)) {
        failures.push(`${label}: content-type ${String(exchange.contentType)} not declared (declared: ${Object.keys(response.content).join(', ')})`);
        continue;
      }
      const validate = compile([...path, 'content', type, 'schema']);
      const body = parsed(exchange);
      if (!validate(body)) {
        failures.push(`${label}: ${JSON.stringify(validate.errors?.map((e) => `${e.instancePath} ${e.message ?? ''}`))} in ${exchange.body.slice(0, 300)}`);
      }
      if (exchange.status >= 400 && (body as { status?: unknown } | undefined)?.status !== exchange.status) {
        failures.push(`${label}: the problem's status member differs from the HTTP status`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('covers every registry operation with at least one success', () => {
    const succeeded = new Set(
      exchanges.filter((e) => e.status >= 200 && e.status < 300).map((e) => `${e.method} ${matchTemplate(document, e.method, e.url) ?? e.url}`),
    );
    // Streams never end, so this in-process walk sees only their refusals; test/realtime covers their successes over real HTTP.
    const uncovered = operations.filter((op) => op.kind !== 'stream' && !succeeded.has(`${op.http.method} /api/v1${op.http.path}`)).map((op) => op.name);
    expect(uncovered).toEqual([]);
  });

  it('covers refusals, validation failures, conflicts, the state machine and replays', () => {
    const codes = new Set(exchanges.map(problemCode));
    const expected: ErrorCode[] = [
      'unauthenticated',
      'invalid_token',
      'forbidden_scope',
      'tool_not_allowed',
      'human_required',
      'not_found',
      'validation_failed',
      'invalid_parameter',
      'malformed_json',
      'unsupported_media_type',
      'idempotency_key_required',
      'idempotency_key_reused',
      'invalid_precondition',
      'conflict_version',
      'invalid_transition',
      'already_claimed',
      'not_lease_holder',
      'lease_expired',
      'lease_inactive',
      'conflict_state',
      'approval_not_pending',
      'approval_stale',
      'assigned_to_other',
      'assignee_lease_held',
      'unknown_principal',
      'task_deleted',
      'not_comment_author',
      'comment_deleted',
      'backoff_pending',
      'not_dead_lettered',
      'reservation_conflict',
      'reservation_lapsed',
      'not_reservation_holder',
    ];
    expect(expected.filter((code) => !codes.has(code))).toEqual([]);
    const replays = exchanges.filter((e) => e.headers['idempotency-replayed'] === 'true');
    expect(replays.some((e) => e.status < 300)).toBe(true);
    expect(replays.some((e) => e.status >= 400)).toBe(true);
    expect(exchanges.some((e) => e.status === 304)).toBe(true);
  });
});

describe('list responses', () => {
  it('were served by every paginated operation', () => {
    const listed = new Set(lists().map(({ exchange }) => `${exchange.method} ${matchTemplate(document, exchange.method, exchange.url) ?? ''}`));
    expect(paginated.length).toBeGreaterThan(0);
    expect(paginated.filter((op) => !listed.has(`${op.http.method} /api/v1${op.http.path}`)).map((op) => op.name)).toEqual([]);
  });

  it('never hold an array over 100 items, even when more rows exist', () => {
    const all = lists();
    const over = all.filter(({ body }) => longestArray(body) > 100).map(({ exchange }) => exchange.url);
    expect(over).toEqual([]);
    // The walk made more than 100 tasks and events, so full pages were asked for and bounded.
    expect(all.some(({ body }) => Array.isArray(body.data) && body.data.length === 100 && body.has_more === true)).toBe(true);
  });

  it('always carry has_more, next_cursor and sync_cursor, consistently', () => {
    for (const { exchange, body } of lists()) {
      const label = `${exchange.method} ${exchange.url}`;
      expect(Array.isArray(body.data), label).toBe(true);
      expect(typeof body.has_more, label).toBe('boolean');
      expect('next_cursor' in body && (body.next_cursor === null || typeof body.next_cursor === 'string'), label).toBe(true);
      expect('sync_cursor' in body && (body.sync_cursor === null || typeof body.sync_cursor === 'string'), label).toBe(true);
      expect(body.next_cursor !== null, label).toBe(body.has_more);
    }
  });
});
