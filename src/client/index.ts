/**
 * The typed client of Baton's REST API: the only API client of the CLI, the tests and the examples,
 * and the package `baton-tasks-client` (packages/client/build.ts compiles this folder). Every
 * operation of the server's registry is one method, grouped by resource (`tasks_claim_next` is
 * `tasks.claimNext`), and `call(name, input)` reaches any of them by name. Routes and types come
 * from routes.ts and operations.ts, which scripts/generate-client.ts generates from the registry;
 * nothing of the server is imported, so the client runs in browsers and on Node 20 with no
 * runtime dependency (fetch, URL and web streams).
 */
import type { OperationRoutes, Operations, StreamName } from './operations.ts';
import { ROUTES, type RouteOf } from './routes.ts';
import { problemOf } from './problem.ts';
import { followStream, sleep, type StreamOptions } from './stream.ts';

export { BatonProblem, problemOf, type Problem } from './problem.ts';
export type { ErrorCode, Manifest, Operations, StreamName } from './operations.ts';
export type { StreamOptions } from './stream.ts';

export type OperationName = keyof Operations;
/** The operations answered once (every one but the event streams): what `call` reaches. */
export type CallName = Exclude<OperationName, StreamName>;
/** What a call sends: the operation's input as a caller writes it (before defaults). */
export type InputOf<N extends OperationName> = Operations[N]['input'];
/** What a call answers: the operation's output. */
export type OutputOf<N extends OperationName> = Operations[N]['output'];
export type Task = OutputOf<'tasks_get'>;
export type TaskEvent = OutputOf<'events_stream'>;

export interface ClientOptions {
  /** The server, e.g. `https://baton.example.com` (without /api/v1); `''` in a page: the page's own origin. */
  readonly baseUrl: string;
  /** A bearer token, `bat_…`; none when `headers` authenticates (a browser's session cookie and CSRF token). */
  readonly token?: string;
  /** Headers added to every request, read each time (the web app's CSRF token or pasted bearer token). */
  readonly headers?: () => Record<string, string>;
  /** Sends each request; defaults to the global fetch. */
  readonly fetch?: Fetch;
  /** Makes the Idempotency-Key of a write that was given none; defaults to a random UUID. */
  readonly idempotencyKey?: () => string;
  /**
   * How many times in all a request is sent when it fails in a way that may pass later: no answer
   * (a network failure), or a problem whose code says to wait (RETRY_CODES). A write keeps its
   * Idempotency-Key over the attempts, so it cannot apply twice. Default 1: no retry.
   */
  readonly attempts?: number;
}

/** What the client sends a request with: the global fetch is one, and any function that answers the same way. */
export type Fetch = (url: URL, init: FetchInit) => Promise<FetchResponse>;

export interface FetchInit {
  readonly method: string;
  readonly headers: Record<string, string>;
  readonly body?: string;
  readonly signal?: AbortSignal;
}

/** What the client reads of an answer: a fetch `Response` is one. */
export type FetchResponse = Pick<Response, 'ok' | 'status' | 'statusText' | 'body' | 'json' | 'text'> & { readonly headers: Pick<Headers, 'get'> };

/** The most ids one `directory_list` call names (its `ids` bound: 60 comma-joined ids fit a list parameter). */
export const DIRECTORY_IDS_MAX = 60;

/** `ids` split into the batches one `directory_list` call each can name, for the clients that show principals by name. */
export function directoryBatches(ids: readonly string[]): string[][] {
  return Array.from({ length: Math.ceil(ids.length / DIRECTORY_IDS_MAX) }, (_, i) => ids.slice(i * DIRECTORY_IDS_MAX, (i + 1) * DIRECTORY_IDS_MAX));
}

/** Problems that say to wait and send the same request again: the attempts after them wait `Retry-After` (at most 5 s). */
export const RETRY_CODES: ReadonlySet<string> = new Set(['idempotency_in_progress', 'rate_limited', 'unavailable']);
/** The longest `Retry-After` a retry waits; the wait after a network failure grows by this step per attempt. */
const RETRY_AFTER_MAX_S = 5;
const NETWORK_RETRY_STEP_MS = 500;

export interface CallOptions {
  /** Sent as Idempotency-Key on a write: the same key replays the first answer instead of writing twice. */
  readonly idempotencyKey?: string;
  /** Sent as If-Match: the write is refused (`conflict_version`) unless the resource is still at this version. */
  readonly ifMatch?: number;
  readonly signal?: AbortSignal;
}

type Method = RouteOf['method'];

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
  /** `accept` replaces `application/json` (a download's streamed formats); `query` names a write's members sent in the query string. */
  send(method: Method, path: string, input: Record<string, unknown>, options?: CallOptions & { accept?: string }, query?: readonly string[]): Promise<FetchResponse>;
  readonly options: ClientOptions;
}

export function createTransport(options: ClientOptions): Transport {
  // Called, not passed on: a browser's fetch refuses to run as a method of another object.
  const doFetch = options.fetch ?? ((input, init) => fetch(input, init));
  const api = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
  const newKey = options.idempotencyKey ?? randomKey;
  const attempts = options.attempts ?? 1;
  return {
    options,
    async send(method, path, input, call = {}, query = []) {
      const rest: Record<string, unknown> = { ...input };
      // `{id}` path parameters come out of the input, as the REST adapter puts them back. Without a
      // base URL, the page's own origin.
      const url = new URL(
        api +
          path.replace(/\{(\w+)\}/g, (_, name: string) => {
            const value = rest[name];
            delete rest[name];
            return encodeURIComponent(text(value));
          }),
        options.baseUrl === '' ? globalThis.location?.href : undefined,
      );
      const inQuery = method === 'GET' || method === 'DELETE' ? Object.keys(rest) : query;
      for (const key of inQuery) {
        const value = rest[key];
        delete rest[key];
        if (value !== undefined) url.searchParams.set(key, Array.isArray(value) ? value.map(text).join(',') : text(value));
      }
      const headers: Record<string, string> = { accept: call.accept ?? 'application/json' };
      if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
      let body: string | undefined;
      if (method !== 'GET' && method !== 'DELETE') {
        body = JSON.stringify(rest);
        headers['content-type'] = 'application/json';
      }
      if (method !== 'GET') headers['idempotency-key'] = call.idempotencyKey ?? newKey();
      if (call.ifMatch !== undefined) headers['if-match'] = `"${call.ifMatch}"`;
      for (let attempt = 1; ; attempt++) {
        const init = { method, headers: { ...headers, ...options.headers?.() }, ...(body === undefined ? {} : { body }), ...(call.signal ? { signal: call.signal } : {}) };
        let response: FetchResponse;
        try {
          response = await doFetch(url, init);
        } catch (error) {
          if (attempt >= attempts || call.signal?.aborted) throw error;
          await sleep(NETWORK_RETRY_STEP_MS * attempt, call.signal);
          continue;
        }
        if (response.ok) return response;
        const problem = await problemOf(response);
        if (attempt >= attempts || !RETRY_CODES.has(problem.code)) throw problem;
        await sleep(Math.min(RETRY_AFTER_MAX_S, Number(response.headers.get('retry-after') ?? 1)) * 1000, call.signal);
      }
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

/** The formats `exports.download` streams a window in. */
export type DownloadFormat = 'jsonl' | 'csv';

/** A Baton client: one method per operation of the registry, grouped by resource, and `call` by name. */
export type BatonClient = Omit<OperationRoutes, 'exports'> & {
  /** Calls an operation by its registry name, e.g. `call('tasks_create', { title })`. */
  call<N extends CallName>(name: N, input: InputOf<N>, options?: CallOptions): Promise<OutputOf<N>>;
  exports: OperationRoutes['exports'] & {
    /** The whole window as JSON lines or CSV, streamed: the response body, to read as it arrives. */
    download(input: Omit<InputOf<'exports_get'>, 'cursor' | 'limit'>, format: DownloadFormat, options?: CallOptions): Promise<ReadableStream<Uint8Array>>;
  };
};

export function createClient(options: ClientOptions): BatonClient {
  const t = createTransport(options);
  const routes = new Map(ROUTES.map((route) => [route.name, route]));
  const once = async (route: RouteOf, input: Record<string, unknown>, call?: CallOptions) => {
    const response = await t.send(route.method, route.path, input, call, route.query);
    return response.status === 204 ? undefined : ((await response.json()) as unknown);
  };
  const client: Record<string, unknown> = {
    call: (name: string, input: Record<string, unknown>, call?: CallOptions) => {
      const route = routes.get(name as OperationName);
      if (!route || route.stream) throw new TypeError(`${name} is not an operation call() reaches`);
      return once(route, input, call);
    },
  };
  for (const route of ROUTES) {
    const about = { operation: route.name, method: route.method, path: route.path };
    const fn = route.stream
      ? (input: Record<string, unknown>, stream: StreamOptions = {}) => followStream(t, route.path, input, stream)
      : (input: Record<string, unknown>, call?: CallOptions) => once(route, input, call);
    const [group, name] = route.at;
    if (name === undefined) client[group] = Object.assign(fn, about);
    else ((client[group] ??= {}) as Record<string, unknown>)[name] = Object.assign(fn, about);
  }
  const exportsGet = routes.get('exports_get');
  if (exportsGet) {
    (client.exports as Record<string, unknown>).download = async (input: Record<string, unknown>, format: DownloadFormat, call: CallOptions = {}) => {
      const response = await t.send(exportsGet.method, exportsGet.path, input, { ...call, accept: format === 'csv' ? 'text/csv' : 'application/x-ndjson' });
      if (!response.body) throw new Error('The export answered without a body.');
      return response.body;
    };
  }
  return client as unknown as BatonClient;
}
