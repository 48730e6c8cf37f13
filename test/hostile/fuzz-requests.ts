import type { OpenApiDocument, OpenApiOperation } from '../openapi/openapi-document.ts';

/** mulberry32: a small seeded PRNG, so a failing run is reproduced from its printed seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** Ids the server knows (and forms it does not), filled in before the run. */
export interface Known {
  ids: string[];
  eventIds: string[];
  token: string;
  agentToken: string;
}

type Schema = Record<string, unknown> & {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  anyOf?: Schema[];
  maxLength?: number;
  maxItems?: number;
  minimum?: number;
  maximum?: number;
};

const ULID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const PREFIXES = ['tsk', 'evt', 'agt', 'tok', 'lea', 'apr', 'whk', 'dlv', 'art', 'cmt'];

/**
 * Text and values no endpoint should choke on. No SQL words among them: a body that shows SQL
 * text then came from the server.
 */
const HOSTILE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udc00x',
  '\uffff\ufffe',
  '\ufeffbom',
  '\u202eright-to-left',
  'zero\u200bwidth',
  'e\u0301\u0301\u0301',
  '\u0301'.repeat(2000),
  '😀'.repeat(300),
  '𝕏\u{10FFFF}',
  '\r\n\r\nX-Injected: 1',
  '%00%ff%',
  '../../../etc/passwd',
  '${constructor}',
  '{{7*7}}',
  '<script>alert(1)</script>',
  "' OR 1=1 --",
  '\\',
  '"',
  '__proto__',
  'constructor',
  'NaN',
  '-0',
  '1e309',
  'x'.repeat(256),
  'x'.repeat(4097),
  'y'.repeat(70_000),
];

const HOSTILE_VALUES: unknown[] = [null, true, false, 0, -1, 1.5, -0, 2 ** 53 + 2, 1e308, -1e308, [], {}, [null], { $ne: 1 }, { __proto__: { polluted: 1 } }, ['a', 1, null], 'string'];

/** Query and path values: ids of every shape, cursors, numbers. */
function hostileId(r: () => number, known: Known): string {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const ulid = () => Array.from({ length: 26 }, () => pick([...ULID])).join('');
  switch (Math.floor(r() * 8)) {
    case 0:
      return pick(known.ids);
    case 1:
      return `${pick(PREFIXES)}_${ulid()}`;
    case 2:
      return `${pick(PREFIXES)}_${'I'.repeat(26)}`;
    case 3:
      return pick(['0', '-1', '99999999999999999999999', '1e3', 'null', 'me', '*', '..']);
    case 4:
      return Buffer.from(JSON.stringify({ id: pick(known.ids), n: r() })).toString('base64url');
    case 5:
      return pick(known.eventIds);
    default:
      return pick(HOSTILE_STRINGS).slice(0, 300);
  }
}

function plausible(schema: Schema | undefined, r: () => number, known: Known, depth: number): unknown {
  if (!schema || depth > 6) return null;
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  if (schema.enum) return pick(schema.enum);
  if (schema.anyOf) return plausible(pick(schema.anyOf), r, known, depth + 1);
  const type = (Array.isArray(schema.type) ? pick(schema.type) : schema.type) ?? 'object';
  switch (type) {
    case 'string':
      if (schema.format === 'uri') return 'http://127.0.0.1:9/hook';
      if (schema.format === 'date-time') return new Date(Date.UTC(2026, 0, 1 + Math.floor(r() * 400))).toISOString();
      return r() < 0.5 ? pick(known.ids) : 'fuzz text'.slice(0, Math.max(1, Math.min(9, schema.maxLength ?? 9)));
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 0, Math.min(schema.maximum ?? 100, Math.floor(r() * 200)));
    case 'boolean':
      return r() < 0.5;
    case 'null':
      return null;
    case 'array':
      return Array.from({ length: Math.floor(r() * 3) }, () => plausible(schema.items, r, known, depth + 1));
    default: {
      const out: Record<string, unknown> = {};
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        if (schema.required?.includes(name) || r() < 0.5) out[name] = plausible(property, r, known, depth + 1);
      }
      return out;
    }
  }
}

/** One value, plausible or hostile, for a field of this schema. */
function value(schema: Schema | undefined, r: () => number, known: Known): unknown {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const roll = r();
  if (roll < 0.45) return plausible(schema, r, known, 0);
  if (roll < 0.65) return pick(HOSTILE_STRINGS);
  if (roll < 0.85) return pick(HOSTILE_VALUES);
  if (roll < 0.92) return hostileId(r, known);
  // Past the bound: one more item, one more character.
  if (schema?.maxItems !== undefined) return Array.from({ length: schema.maxItems + 1 }, (_, i) => `v${i}`);
  if (schema?.maxLength !== undefined) return 'z'.repeat(schema.maxLength + 1);
  if (schema?.maximum !== undefined) return schema.maximum + 1;
  return pick(HOSTILE_VALUES);
}

/** JSON nested `depth` levels, as text. */
const nested = (depth: number, open: string, close: string) => `${open.repeat(depth)}${close.repeat(depth)}`;

const MALFORMED_BODIES = [
  '{',
  '{"title": }',
  '{"title": "x",}',
  "{'title': 'x'}",
  'nul',
  '"just a string"',
  '42',
  '[]',
  'null',
  '\ufeff{"title":"bom"}',
  '{"title":"a","title":"b"}',
  '{"__proto__":{"admin":true},"title":"proto"}',
  '{"constructor":{"prototype":{"x":1}}}',
  '{"title":"\\ud800"}',
  '{"title":"\\u0000"}',
  '\u0000',
  nested(64, '[', ']'),
  nested(5_000, '[', ']'),
  nested(100_000, '[', ']'),
  nested(50_000, '{"a":', '}').replace(/\}+$/, (m) => '1' + m),
  `{"title":"${'x'.repeat(200_000)}"}`,
];

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/merge-patch+json',
  'application/jsonx',
  'application/json, text/plain',
  '*/*',
  '',
];

export interface Route {
  method: string;
  path: string;
  op: OpenApiOperation;
}

/** Every route of the document a plain request can finish: SSE streams never end on their own. */
export function routes(document: OpenApiDocument): Route[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => !Object.values(op.responses).some((response) => response.content?.['text/event-stream']))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

/** Percent-encoding that also carries a lone surrogate, as the invalid UTF-8 a careless client would send. */
function encode(text: string): string {
  return text.replace(/[\ud800-\udbff][\udc00-\udfff]|[\s\S]/g, (c) => (/^[\ud800-\udfff]$/.test(c) ? '%ED%A0%80' : encodeURIComponent(c)));
}

/** One hostile request for a route of the document, from the PRNG. */
export function fuzzRequest(route: Route, r: () => number, known: Known): FuzzRequest {
  const pick = <T>(list: readonly T[]): T => list[Math.floor(r() * list.length)] as T;
  const path = route.path.replace(/\{(\w+)\}/g, () => encode(hostileId(r, known)));
  const query: string[] = [];
  const headers: Record<string, string> = {};
  const authorization = r();
  if (authorization < 0.8) headers.authorization = `Bearer ${known.token}`;
  else if (authorization < 0.9) headers.authorization = `Bearer ${known.agentToken}`;
  else if (authorization < 0.95) headers.authorization = pick(['Bearer bat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000', 'Bearer ', 'Basic Zm9vOmJhcg==', 'bearer x'.repeat(100)]);
  for (const parameter of route.op.parameters ?? []) {
    if (parameter.in === 'path') continue;
    const include = parameter.required ? r() < 0.95 : r() < 0.5;
    if (!include) continue;
    const raw = value(parameter.schema as Schema, r, known);
    const text = typeof raw === 'string' ? raw : JSON.stringify(raw);
    if (parameter.in === 'query') {
      const times = r() < 0.15 ? 2 : 1; // duplicate query parameters
      for (let i = 0; i < times; i += 1) query.push(`${parameter.name}=${encode(text ?? '')}`);
    } else if (parameter.in === 'header') {
      // Header values must be visible ASCII for the HTTP client itself to send them.
      headers[parameter.name.toLowerCase()] = parameter.name === 'Idempotency-Key' && r() < 0.5 ? `fuzz-${r()}` : (text ?? '').replace(/[^\x20-\x7e]/g, '?').slice(0, 8_000);
    }
  }
  if (r() < 0.1) query.push(`${pick(['unknown', 'limit', 'cursor', 'since', 'view', '__proto__', 'a[b]'])}=${encode(hostileId(r, known))}`);
  if (r() < 0.05) query.push(pick(['%', '%zz', '&&&', '=', 'limit', 'limit=&limit=']));
  const url = query.length > 0 ? `${path}?${query.join('&')}` : path;

  const content = route.op.requestBody?.content ?? {};
  const schema = (content['application/json']?.schema ?? undefined) as Schema | undefined;
  if (route.method === 'GET' || route.method === 'DELETE') {
    if (r() < 0.05) return { method: route.method, url, headers: { ...headers, 'content-type': 'application/json' }, payload: pick(MALFORMED_BODIES) };
    return { method: route.method, url, headers };
  }
  const shape = r();
  let payload: string;
  if (shape < 0.55) {
    const made = plausible(schema, r, known, 0);
    const body: Record<string, unknown> = typeof made === 'object' && made !== null && !Array.isArray(made) ? (made as Record<string, unknown>) : {};
    for (const [name, property] of Object.entries(schema?.properties ?? {})) if (r() < 0.4) body[name] = value(property, r, known);
    // An extra field (an own `__proto__` too, which JSON.stringify then writes out).
    if (r() < 0.15) Object.defineProperty(body, pick(['extra', 'id', 'version', 'created_by', '__proto__', 'status ']), { value: value(undefined, r, known), enumerable: true, writable: true, configurable: true });
    payload = JSON.stringify(body);
  } else if (shape < 0.8) {
    payload = pick(MALFORMED_BODIES);
  } else {
    payload = JSON.stringify(value(schema, r, known));
  }
  headers['content-type'] = r() < 0.8 ? 'application/json' : pick(CONTENT_TYPES);
  if (headers['content-type'] === '') delete headers['content-type'];
  return { method: route.method, url, headers, payload };
}
