import { BatonProblem } from '../client/index.ts';

/**
 * What `baton` exits with, so scripts can tell failures apart (README, "Exit codes"). Each problem
 * code the server answers maps to one of these by its HTTP status.
 */
export const EXIT = {
  ok: 0,
  /** Anything not below: a server error, an unexpected answer. */
  failed: 1,
  /** The command line was wrong: an unknown command or option, a missing argument, bad configuration. */
  usage: 2,
  /** Not logged in, the token was refused (401), or it lacks the scope (403). */
  auth: 3,
  /** The task, lease, agent, token or approval does not exist (404). */
  notFound: 4,
  /** The resource changed meanwhile or is taken: version conflict, already claimed, a transition the state machine refuses (409, 412, 422 except validation). */
  conflict: 5,
  /** The server refused the input as invalid (400, 413, 422 validation_failed). */
  invalid: 6,
  /** Try again later: the server is unreachable, rate limited (429) or unavailable (503). */
  unavailable: 7,
  /** Nothing to do, not a failure: `baton wait` saw nothing before --timeout (run it again with the cursor), `baton tasks claim` found nothing to claim. */
  idle: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export function exitCodeOf(error: unknown): ExitCode {
  if (!(error instanceof BatonProblem)) return isConnectionError(error) ? EXIT.unavailable : EXIT.failed;
  if (error.status === 401 || error.status === 403) return EXIT.auth;
  if (error.status === 404) return EXIT.notFound;
  if (error.status === 429 || error.status === 503) return EXIT.unavailable;
  if (error.code === 'validation_failed' || error.status === 400 || error.status === 413) return EXIT.invalid;
  if (error.status === 409 || error.status === 412 || error.status === 422 || error.status === 423) return EXIT.conflict;
  return EXIT.failed;
}

/** fetch() failed before any answer: refused, unknown host, reset. */
export function isConnectionError(error: unknown): boolean {
  return error instanceof TypeError && error.message === 'fetch failed';
}

/** The connection error's cause, as a person reads it. */
export function connectionReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code === 'ECONNREFUSED') return 'connection refused';
  if (cause?.code === 'ENOTFOUND') return 'host not found';
  return cause?.message ?? 'no answer';
}
