/**
 * The one way the app talks to Baton: the session cookie (single sign-on) with its CSRF token, or a
 * pasted bearer token from sessionStorage; problems as `ApiProblem`. Requests go through the typed
 * client's transport (src/client/), which holds the retry and idempotency policy the CLI uses too.
 */
import { BatonProblem, type ClientOptions, createClient, createTransport, problemOf as problemOfResponse, type Transport } from '../../src/client/index.ts';

const TOKEN_KEY = 'baton.token';

/** An RFC 9457 problem as Baton sends it, with the members the app reads. */
export interface Problem {
  code: string;
  title: string;
  status: number;
  detail?: string;
  hint?: string;
  retryable?: boolean;
  legal_transitions?: string[];
  current_status?: string;
  current_version?: number;
  operation?: string;
  errors?: { pointer: string; detail: string }[];
}

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

export interface WriteOptions {
  /** One Idempotency-Key per user action (see `ActionKey`); automatic retries reuse it. */
  key: string;
  /** The version the user saw, sent as If-Match. */
  ifMatch?: number;
  body?: unknown;
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

  /** The key to send `request` (its method, path and body) with. */
  for(request: { method: string; path: string; body?: unknown }): string {
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
  if (typeof body.code === 'string' && typeof body.title === 'string') return { ...body, status: error.status } as Problem;
  // Not Baton's answer (a proxy's): past 500 the write may or may not have reached Baton.
  return { code: 'http_error', title: `The server answered ${error.status} ${error.statusText}`, status: error.status, retryable: error.status >= 500 };
}

const sameOrigin: Pick<ClientOptions, 'baseUrl' | 'attempts'> = { baseUrl: '', attempts: MAX_ATTEMPTS };
const sessionOptions: ClientOptions = { ...sameOrigin, headers: () => authHeaders() };
/** The page's transport: the stored token or the cookie session, read at each request. */
const session = createTransport(sessionOptions);
/** The typed client on the same session (the live feed follows the event stream with it). */
export const sessionClient = createClient(sessionOptions);

async function send<T>(method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, init: { token?: string; key?: string; ifMatch?: number; body?: unknown } = {}): Promise<T> {
  const transport: Transport = init.token ? createTransport({ ...sameOrigin, token: init.token }) : session;
  let res: Response;
  try {
    res = await transport.send(method, path, (init.body ?? {}) as Record<string, unknown>, {
      ...(init.key === undefined ? {} : { idempotencyKey: init.key }),
      ...(init.ifMatch === undefined ? {} : { ifMatch: init.ifMatch }),
    });
  } catch (error) {
    if (!(error instanceof BatonProblem)) {
      throw new ApiProblem({ code: 'network', title: 'Baton could not be reached', status: 0, detail: 'The request did not reach the server.', hint: 'Check your connection and try again.', retryable: true });
    }
    const problem = toProblem(error);
    if (problem.status === 401 && !init.token) onUnauthorized(problem);
    throw new ApiProblem(problem);
  }
  return (res.status === 204 ? undefined : await res.json()) as T;
}

/** A GET; `token` overrides the stored one (sign-in checks a token before keeping it). */
export function get<T>(path: string, token?: string): Promise<T> {
  return send<T>('GET', path, token ? { token } : {});
}

/** A write with its Idempotency-Key (and If-Match when a version is known). */
export function write<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, options: WriteOptions): Promise<T> {
  return send<T>(method, path, { key: options.key, ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }), ...(options.body === undefined ? {} : { body: options.body }) });
}

/** The pages of a list, 100 items each and at most `maxPages`, each as soon as it arrives. */
export async function* pages<T>(path: string, maxPages = 5): AsyncGenerator<Page<T>> {
  const sep = path.includes('?') ? '&' : '?';
  let cursor: string | null = null;
  for (let page = 0; page < maxPages; page++) {
    const res: Page<T> = await get<Page<T>>(`${path}${sep}limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    yield res;
    if (!res.has_more || !res.next_cursor) return;
    cursor = res.next_cursor;
  }
}

/** Reads every page of a list (bounded: `maxPages` of 100). */
export async function getAll<T>(path: string, maxPages = 5): Promise<{ data: T[]; sync_cursor: string | null }> {
  const data: T[] = [];
  let sync: string | null | undefined;
  for await (const page of pages<T>(path, maxPages)) {
    if (sync === undefined) sync = page.sync_cursor;
    data.push(...page.data);
  }
  return { data, sync_cursor: sync ?? null };
}

export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  sync_cursor: string | null;
}
