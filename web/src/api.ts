/**
 * The one way the app talks to Baton: the typed client (src/client/), whose generated per-operation
 * types make a renamed route or field in the registry a compile error here, and whose transport
 * holds the retry and idempotency policy the CLI uses too. Authenticates with the session cookie
 * (single sign-on) and its CSRF token, or a pasted bearer token from sessionStorage; failures come
 * out as `ApiProblem`.
 */
import {
  BatonProblem,
  type CallName,
  type ClientOptions,
  createClient,
  createTransport,
  type ErrorCode,
  type InputOf,
  type Manifest,
  type OutputOf,
  type Problem as ServedProblem,
  problemOf as problemOfResponse,
} from '../../src/client/index.ts';

const TOKEN_KEY = 'baton.token';

/** Codes of failures the app names itself: no answer, an answer that was not Baton's, a broken stream, an undo with no way back or refused. */
type AppCode = 'network' | 'http_error' | 'stream' | 'cannot_undo' | 'undo_refused';

/**
 * A problem as the app shows it: the client's problem document (RFC 9457), whose members past
 * `title` and `status` a failure the app names itself may lack, and the extension members some
 * codes add (`conflict_version`: current_version; `invalid_transition`: current_status; an approval's `operation`).
 */
export type Problem = Pick<ServedProblem, 'title' | 'status'> &
  Partial<Pick<ServedProblem, 'detail' | 'hint' | 'retryable' | 'legal_transitions' | 'errors'>> & {
    code: ErrorCode | AppCode;
    current_status?: string;
    current_version?: number;
    operation?: string;
  };

export class ApiProblem extends Error {
  readonly problem: Problem;
  constructor(problem: Problem) {
    super(problem.detail ?? problem.title);
    this.problem = problem;
  }
}

/** Any failure as a problem to show: the server's own, or one that says what happened (never a blank page). */
export function problemOf(error: unknown): Problem {
  if (error instanceof ApiProblem) return error.problem;
  if (error instanceof BatonProblem) return toProblem(error);
  return { code: 'internal', title: 'Something went wrong in this page', status: 0, detail: error instanceof Error ? error.message : String(error), hint: 'Try again; if it keeps failing, reload the page.' };
}

export function getToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token === null) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

let onUnauthorized: (problem: Problem) => void = () => undefined;

/** Called when the server stops accepting the token (revoked, expired, disabled). */
export function handleUnauthorized(handler: (problem: Problem) => void): void {
  onUnauthorized = handler;
}

/** What GET /auth/session says: the provider to offer, the cookie's session, and its CSRF token. */
export interface AuthState {
  oidc: { name: string; login_url: string; required: boolean } | null;
  session: { id: string; principal_id: string } | null;
  csrf_token: string | null;
}

let csrfToken: string | null = null;

/** Asks the server whether this browser has a session cookie (HttpOnly, so only the server can tell), and keeps its CSRF token. */
export async function readAuthState(): Promise<AuthState> {
  const res = await fetch('/auth/session', { headers: { accept: 'application/json' } });
  const state = res.ok ? ((await res.json()) as AuthState) : { oidc: null, session: null, csrf_token: null };
  csrfToken = state.csrf_token;
  return state;
}

/** Ends the cookie session on the server (a pasted token is simply forgotten). */
export async function endCookieSession(): Promise<void> {
  if (csrfToken === null) return;
  await fetch('/auth/logout', { method: 'POST', headers: { 'x-csrf-token': csrfToken } }).catch(() => undefined);
  csrfToken = null;
}

/**
 * Moves this browser's cookie session to another of the person's workspaces: the server ends this
 * session and sets the cookie of a new one there. Throws the server's problem (`workspace_not_found`).
 */
export async function switchWorkspace(workspaceId: string): Promise<void> {
  const res = await fetch('/auth/workspace', {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/json', ...(csrfToken ? { 'x-csrf-token': csrfToken } : {}) },
    body: JSON.stringify({ workspace_id: workspaceId }),
  });
  if (!res.ok) throw new ApiProblem(toProblem(await problemOfResponse(res)));
}

/** A pasted token wins; otherwise the cookie goes by itself and writes carry the CSRF token. */
export function authHeaders(token = getToken()): Record<string, string> {
  if (token) return { authorization: `Bearer ${token}` };
  return csrfToken ? { 'x-csrf-token': csrfToken } : {};
}

/** How one call is sent, past its input. */
export interface SendOptions {
  /** The Idempotency-Key of a write: one per user action (see `ActionKey`); automatic retries reuse it. */
  key?: string;
  /** The version the user saw, sent as If-Match. */
  ifMatch?: number;
  /** A token to use instead of the stored one (sign-in checks a token before keeping it). */
  token?: string;
}

export const newKey = (): string => crypto.randomUUID();

/**
 * Whether a failed write may be sent again as it was, under the same key: its answer never came
 * (network failure, a gateway's 5xx) or the server marked the problem retryable (it remembers
 * nothing for those). A refusal that is not retryable is remembered under its key for a day.
 */
function mayRetry(error: unknown): boolean {
  return error instanceof ApiProblem && error.problem.retryable === true;
}

/**
 * The Idempotency-Key of one user action over its attempts. A retry of the same request after a
 * failure that may be retried carries the same key, so it cannot apply twice. A request that
 * differs from the last one (the user edited the input), or that follows a success or a refusal,
 * gets a new key: a correction is never answered with the stored refusal or
 * `idempotency_key_reused`.
 */
export class ActionKey {
  #key = newKey();
  #request: string | null = null;

  /** The key to send `request` (its operation and input, path parameters included) with. */
  for(request: { operation: string; input: unknown }): string {
    const text = JSON.stringify(request);
    if (this.#request !== null && this.#request !== text) this.#key = newKey();
    this.#request = text;
    return this.#key;
  }

  /** How the attempt ended (`error` unless it succeeded): only a failure that may be retried keeps the key. */
  settle(error?: unknown): void {
    if (error !== undefined && mayRetry(error)) return;
    this.#key = newKey();
    this.#request = null;
  }
}

/** Tries per request: a network failure or a problem that says to wait is sent again, under the same key. */
const MAX_ATTEMPTS = 3;

/** The client's problem as the app shows it: the server's own, or one that names an answer that was not Baton's. */
function toProblem(error: BatonProblem): Problem {
  const body = error.problem;
  if (typeof body.code === 'string' && typeof body.title === 'string') return { ...body, code: body.code, title: body.title, status: error.status };
  // Not Baton's answer (a proxy's): past 500 the write may or may not have reached Baton.
  return { code: 'http_error', title: `The server answered ${error.status} ${error.statusText}`, status: error.status, retryable: error.status >= 500 };
}

const sameOrigin: Pick<ClientOptions, 'baseUrl' | 'attempts'> = { baseUrl: '', attempts: MAX_ATTEMPTS };
const sessionOptions: ClientOptions = { ...sameOrigin, headers: () => authHeaders() };
/** The typed client on the page's session: the stored token or the cookie session, read at each request. */
export const sessionClient = createClient(sessionOptions);

/** Any failure of a call as an `ApiProblem`; a 401 of the session tells `handleUnauthorized`'s handler. */
function asApiProblem(error: unknown, ofSession: boolean): ApiProblem {
  if (!(error instanceof BatonProblem)) {
    return new ApiProblem({ code: 'network', title: 'Baton could not be reached', status: 0, detail: 'The request did not reach the server.', hint: 'Check your connection and try again.', retryable: true });
  }
  const problem = toProblem(error);
  if (problem.status === 401 && ofSession) onUnauthorized(problem);
  return new ApiProblem(problem);
}

/**
 * Calls one operation of the registry by name with its typed input, e.g.
 * `call('tasks_update', { id, status }, { key, ifMatch })`; answers its typed output.
 */
export async function call<N extends CallName>(name: N, input: InputOf<N>, options: SendOptions = {}): Promise<OutputOf<N>> {
  const client = options.token ? createClient({ ...sameOrigin, token: options.token }) : sessionClient;
  try {
    return await client.call(name, input, {
      ...(options.key === undefined ? {} : { idempotencyKey: options.key }),
      ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
    });
  } catch (error) {
    throw asApiProblem(error, options.token === undefined);
  }
}

/** The full capability manifest (`GET /api/v1?view=full`), with `token` or the page's session. */
export async function readManifest(token?: string): Promise<Manifest> {
  const transport = createTransport(token ? { ...sameOrigin, token } : sessionOptions);
  try {
    return (await (await transport.send('GET', '', { view: 'full' })).json()) as Manifest;
  } catch (error) {
    throw asApiProblem(error, token === undefined);
  }
}

/** The list operations: paged by `cursor`, answering `data` with `has_more` and `next_cursor`. */
export type ListName = {
  [N in CallName]: 'cursor' extends keyof InputOf<N> ? (OutputOf<N> extends { data: readonly unknown[]; has_more: boolean; next_cursor: string | null } ? N : never) : never;
}[CallName];
/** An item of a list operation's page. */
export type ItemOf<N extends ListName> = OutputOf<N>['data'][number];
/** A list's input less what paging sets. */
type ListInput<N extends ListName> = Omit<InputOf<N>, 'cursor' | 'limit'>;

/** The pages of a list, 100 items each and at most `maxPages`, each as soon as it arrives. */
export async function* pages<N extends ListName>(name: N, input: ListInput<N>, maxPages = 5): AsyncGenerator<OutputOf<N>> {
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const res: OutputOf<N> = await call(name, { ...input, limit: 100, ...(cursor ? { cursor } : {}) });
    yield res;
    if (!res.has_more || !res.next_cursor) return;
    cursor = res.next_cursor;
  }
}

/**
 * Reads every page of a list (bounded: `maxPages` of 100), the first page's `sync_cursor`, and
 * whether that was all (`complete`: false when the bound stopped it with more left).
 */
export async function getAll<N extends ListName>(name: N, input: ListInput<N>, maxPages = 5): Promise<{ data: ItemOf<N>[]; sync_cursor: string | null; complete: boolean }> {
  const data: ItemOf<N>[] = [];
  let sync: string | null | undefined;
  let complete = true;
  for await (const page of pages(name, input, maxPages)) {
    if (sync === undefined) sync = 'sync_cursor' in page && typeof page.sync_cursor === 'string' ? page.sync_cursor : null;
    data.push(...(page.data as ItemOf<N>[]));
    complete = !page.has_more;
  }
  return { data, sync_cursor: sync ?? null, complete };
}
