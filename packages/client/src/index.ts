/**
 * `baton-tasks-client`: a typed client of Baton's REST API. Every operation of the server's registry
 * is one method, grouped by resource (`tasks_claim_next` is `tasks.claimNext`); its input and output
 * types and its route come from operations.ts, which build.ts generates from the registry when the
 * package is built. No runtime dependency: fetch, URL and web streams (Node 20+, browsers).
 */
import { type BatonRoutes, type Operations, ROUTES } from './operations.ts';
import { problemOf } from './problem.ts';
import { followStream, type StreamOptions } from './stream.ts';

export { BatonProblem, type Problem } from './problem.ts';
export type { ErrorCode, Operations } from './operations.ts';
export type { StreamOptions } from './stream.ts';

export type OperationName = keyof Operations;
/** What a call sends: the operation's input as a caller writes it (before defaults). */
export type InputOf<N extends OperationName> = Operations[N]['input'];
/** What a call answers: the operation's output. */
export type OutputOf<N extends OperationName> = Operations[N]['output'];
export type Task = OutputOf<'tasks_get'>;
export type TaskEvent = OutputOf<'events_stream'>;

export interface ClientOptions {
  /** The server, e.g. `https://baton.example.com` (without /api/v1). */
  readonly baseUrl: string;
  /** A bearer token, `bat_…`. */
  readonly token: string;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Makes the Idempotency-Key of a write that was given none; defaults to a random UUID. */
  readonly idempotencyKey?: () => string;
}

export interface CallOptions {
  /** Sent as Idempotency-Key on a write: the same key replays the first answer instead of writing twice. */
  readonly idempotencyKey?: string;
  /** Sent as If-Match: the write is refused (`version_conflict`) unless the resource is still at this version. */
  readonly ifMatch?: number;
  readonly signal?: AbortSignal;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** One operation as a typed function; `method`, `path` and `operation` say which route it calls. */
export interface Route<N extends OperationName> {
  (input: InputOf<N>, options?: CallOptions): Promise<OutputOf<N>>;
  readonly operation: N;
  readonly method: Method;
  readonly path: string;
}

/**
 * A Server-Sent Events operation as an async iterable of its events, until `signal` aborts; after a
 * dropped connection it reconnects from the last event seen (Last-Event-ID), so nothing is missed or repeated.
 */
export interface Follow<N extends OperationName> {
  (input: InputOf<N>, stream?: StreamOptions): AsyncIterable<OutputOf<N>>;
  readonly operation: N;
  readonly method: Method;
  readonly path: string;
}

/** The transport every route shares: one request, its problem turned into a `BatonProblem`. */
export interface Transport {
  send(method: Method, path: string, input: Record<string, unknown>, options?: CallOptions, query?: readonly string[]): Promise<Response>;
  readonly options: ClientOptions;
}

function transport(options: ClientOptions): Transport {
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const api = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
  const newKey = options.idempotencyKey ?? randomKey;
  return {
    options,
    async send(method, path, input, call = {}, query = []) {
      const rest: Record<string, unknown> = { ...input };
      // `{id}` path parameters come out of the input, as the REST adapter puts them back.
      const url = new URL(
        api +
          path.replace(/\{(\w+)\}/g, (_, name: string) => {
            const value = rest[name];
            delete rest[name];
            return encodeURIComponent(text(value));
          }),
      );
      const inQuery = method === 'GET' || method === 'DELETE' ? Object.keys(rest) : query;
      for (const key of inQuery) {
        const value = rest[key];
        delete rest[key];
        if (value !== undefined) url.searchParams.set(key, Array.isArray(value) ? value.map(text).join(',') : text(value));
      }
      const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
      let body: string | undefined;
      if (method !== 'GET' && method !== 'DELETE') {
        body = JSON.stringify(rest);
        headers['content-type'] = 'application/json';
      }
      if (method !== 'GET') headers['idempotency-key'] = call.idempotencyKey ?? newKey();
      if (call.ifMatch !== undefined) headers['if-match'] = `"${call.ifMatch}"`;
      const response = await doFetch(url, { method, headers, ...(body === undefined ? {} : { body }), ...(call.signal ? { signal: call.signal } : {}) });
      if (!response.ok) throw await problemOf(response);
      return response;
    },
  };
}

/** A random UUID; browsers give crypto.randomUUID to secure contexts only (https, localhost), getRandomValues to every page. */
function randomKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A query or path value as text: strings as they are, numbers and booleans as JSON writes them. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A Baton client: one method per operation of the registry, grouped by resource. */
export type BatonClient = BatonRoutes;

export function createClient(options: ClientOptions): BatonClient {
  const t = transport(options);
  const client: Record<string, unknown> = {};
  for (const route of ROUTES) {
    const about = { operation: route.name, method: route.method, path: route.path };
    const call = route.stream
      ? (input: Record<string, unknown>, stream: StreamOptions = {}) => followStream(t, route.path, input, stream)
      : async (input: Record<string, unknown>, call?: CallOptions) => {
          const response = await t.send(route.method, route.path, input, call, route.query);
          return response.status === 204 ? undefined : ((await response.json()) as unknown);
        };
    const [group, name] = route.at;
    if (name === undefined) client[group] = Object.assign(call, about);
    else ((client[group] ??= {}) as Record<string, unknown>)[name] = Object.assign(call, about);
  }
  return client as unknown as BatonClient;
}
