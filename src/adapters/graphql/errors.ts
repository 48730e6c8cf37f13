import { GraphQLError } from 'graphql';
import { BatonError, type Dialect, ERROR_CODES, type Problem, toProblem } from '../../errors.ts';

/** Where unexpected failures are reported before they become an `internal` problem. */
export type ErrorLog = (details: object, message: string) => void;

/** What a GraphQL problem is rendered with: the base of its links and GraphQL's wording of hints. */
export interface Problems {
  readonly baseUrl: string;
  readonly dialect: Dialect;
}

/** A GraphQL error whose `extensions` is the problem document REST would send (`code`, `status`, `hint`, …). */
export function problemError(problem: Problem, from?: GraphQLError): GraphQLError {
  return new GraphQLError(problem.detail, {
    nodes: from?.nodes,
    source: from?.source,
    positions: from?.positions,
    path: from?.path,
    extensions: { ...problem, ...(from?.extensions['http'] ? { http: from.extensions['http'] } : {}) },
  });
}

function isProblemShaped(error: GraphQLError): boolean {
  const code = error.extensions['code'];
  return typeof code === 'string' && (ERROR_CODES as readonly string[]).includes(code) && 'docs_url' in error.extensions;
}

/**
 * The one translation of anything thrown into a GraphQL error with problem `extensions`:
 * a `BatonError` keeps its code; GraphQL's own refusals (syntax, unknown field, bad variable) are
 * `invalid_query`; anything else is `internal`, logged, and never shows a stack. Errors that are not
 * about one field (no `path`: authentication, rate limits, invalid documents, limits) also carry the
 * problem's HTTP status and headers for the response.
 */
export function toGraphQLError(error: unknown, problems: Problems, log: ErrorLog): GraphQLError {
  const located = error instanceof GraphQLError ? error : undefined;
  const original = located?.originalError ?? error;
  let translated: GraphQLError;
  if (located && original === located && isProblemShaped(located)) {
    translated = located;
  } else if (original instanceof GraphQLError && isProblemShaped(original)) {
    translated = new GraphQLError(original.message, { nodes: located?.nodes, path: located?.path, extensions: original.extensions });
  } else if (original instanceof BatonError) {
    translated = problemError(toProblem(original, problems.baseUrl, problems.dialect), located);
    if (!located?.path) translated.extensions['http'] = { status: original.status, headers: original.headers };
  } else if (original instanceof GraphQLError) {
    translated = problemError(toProblem(new BatonError('invalid_query', original.message), problems.baseUrl, problems.dialect), original);
    // Yoga marks its own refusals `spec`, which it answers 200 under application/json; Baton's
    // status is the problem's whatever the Accept (spec/graphql.md, "Errors").
    if (!located?.path) translated.extensions['http'] = { status: 400 };
  } else if (!located?.path && original instanceof SyntaxError) {
    // Yoga reads a GET's `variables` and `extensions` with JSON.parse, and hands on its SyntaxError.
    translated = problemError(toProblem(new BatonError('invalid_query', `A request parameter is not valid JSON: ${original.message}`), problems.baseUrl, problems.dialect), located);
  } else {
    log({ err: original, path: located?.path }, 'graphql resolver failed unexpectedly');
    translated = problemError(toProblem(new BatonError('internal', 'The server failed while handling this request; nothing was written.'), problems.baseUrl, problems.dialect), located);
  }
  if (!translated.path && !translated.extensions['http']) {
    translated.extensions['http'] = { status: Number(translated.extensions['status']) };
  }
  return translated;
}
