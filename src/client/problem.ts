import type { ErrorCode, ProblemDocument } from './operations.ts';

/** A problem document (RFC 9457) as Baton serves it. */
export type Problem = ProblemDocument;

/** A problem document the server answered with, as an Error. */
export class BatonProblem extends Error {
  override name = 'BatonProblem';
  readonly status: number;
  /** `unexpected_response` when the answer was not a problem document (a proxy's error page). */
  readonly code: ErrorCode | 'unexpected_response';
  readonly hint: string | undefined;
  readonly retryable: boolean;
  readonly problem: Partial<Problem>;
  /** The HTTP reason phrase the answer came with (`Bad Gateway`), to name an answer that was not Baton's. */
  readonly statusText: string;
  constructor(status: number, problem: Partial<Problem>, statusText = '') {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.status = status;
    this.code = problem.code ?? 'unexpected_response';
    this.hint = problem.hint;
    this.retryable = problem.retryable ?? status >= 500;
    this.problem = problem;
    this.statusText = statusText;
  }
}

/** The problem document of a failed response (or a stand-in when the body is not one). */
export async function problemOf(response: Pick<Response, 'status' | 'statusText' | 'text'>): Promise<BatonProblem> {
  const text = await response.text();
  try {
    return new BatonProblem(response.status, JSON.parse(text) as Partial<Problem>, response.statusText);
  } catch {
    return new BatonProblem(response.status, { detail: `HTTP ${response.status}: ${text.slice(0, 200)}` }, response.statusText);
  }
}
