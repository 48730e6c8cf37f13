import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { type DocumentNode, type ExecutionArgs, getNamedType, getNullableType, GraphQLError, type GraphQLOutputType, isListType, isObjectType, Kind, Lexer, parse, type ParseOptions, Source, TokenKind } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { BatonError } from '../../errors.ts';
import { mutationFields } from './mutation-fields.ts';

/** Deepest selection allowed (introspection's `__schema` aside); Baton's deepest useful one is 6. */
export const MAX_DEPTH = 8;
/** Costliest query allowed: one point per field, times `limit` under a field that takes one. */
export const MAX_COMPLEXITY = 10_000;
/** Most tokens a document may have: bounds what parsing and validating one costs (introspection's query is 163). */
export const MAX_TOKENS = 5_000;
/**
 * Deepest nesting of braces, brackets and parentheses: graphql-js parses recursively, and a
 * document nested a few thousand levels deep overflowed the stack (a 500) before the depth rule
 * could see it. Selections stop at MAX_DEPTH anyway; this leaves room for nested input values.
 */
export const MAX_NESTING = 64;
const OPENING = new Set<string>([TokenKind.BRACE_L, TokenKind.BRACKET_L, TokenKind.PAREN_L]);
const CLOSING = new Set<string>([TokenKind.BRACE_R, TokenKind.BRACKET_R, TokenKind.PAREN_R]);
/** What a page field costs when `limit` is not given: the list default. */
const DEFAULT_LIMIT = 25;

/** A list, or a page (an object whose `data` is a list). */
function returnsMany(type: GraphQLOutputType): boolean {
  const nullable = getNullableType(type);
  if (isListType(nullable)) return true;
  const named = getNamedType(nullable);
  const data = isObjectType(named) ? named.getFields()['data'] : undefined;
  return data !== undefined && isListType(getNullableType(data.type));
}

/**
 * A field with a `limit` argument that returns a list or a page returns up to `limit` objects: its
 * selection is paid for that many times. (A `limit` elsewhere, a budget's, is a plain argument.)
 */
const pageEstimator: ComplexityEstimator = ({ field, args, childComplexity }) => {
  if (!field.args.some((a) => a.name === 'limit') || !returnsMany(field.type)) return undefined;
  const limit = typeof args['limit'] === 'number' ? args['limit'] : DEFAULT_LIMIT;
  return 1 + limit * childComplexity;
};

function tooComplex(measure: 'tokens' | 'nesting' | 'depth' | 'complexity', limit: number, found: number): BatonError {
  return new BatonError('query_too_complex', `The query's ${measure} is ${found}; the limit is ${limit}.`, { extra: { measure, limit, found } });
}

/** What the yoga context carries once a document is parsed: the operations it spends of the rate budget. */
export interface CountedOperations {
  params?: { operationName?: string | null; variables?: Record<string, unknown> | null };
  operations?: number;
}

/**
 * Counts what a parsed document spends of the rate budget into the context's `operations`: each root
 * field of its mutation, or 1 for a query or subscription (spec/graphql.md, "Authentication and rate
 * limits"). No cap of their own: a document of more fields than the budget allows is refused whole
 * when it is counted, and the document limits above bound its size (v1 took such documents).
 */
export function operationCount(): Plugin<CountedOperations> {
  return {
    onParse({ context }) {
      return ({ result, extendContext }) => {
        if (!isDocument(result)) return;
        extendContext({ operations: Math.max(1, mutationFields(result, context.params?.operationName, context.params?.variables ?? {})) });
      };
    },
  };
}

/**
 * Refuses abusive queries before they run: size while parsing, depth while validating (it does
 * not depend on variables), cost just before executing (page sizes may come from variables).
 */
export function queryLimits(): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source: string | Source, options?: ParseOptions) => {
        measureDocument(typeof source === 'string' ? new Source(source) : source);
        return parse(source, options);
      });
    },
    onValidate({ addValidationRule }) {
      addValidationRule(
        maxDepthRule({
          n: MAX_DEPTH,
          flattenFragments: true,
          propagateOnRejection: false,
          onReject: [
            (context, error) => {
              const found = Number(/found (\d+)/.exec(error.message)?.[1] ?? MAX_DEPTH + 1);
              const refusal = tooComplex('depth', MAX_DEPTH, found);
              context?.reportError(new GraphQLError(refusal.detail, { originalError: refusal }));
            },
          ],
        }),
      );
    },
    onExecute({ args }) {
      const { schema, document, variableValues, operationName } = args as ExecutionArgs;
      const found = getComplexity({
        schema,
        query: document,
        variables: variableValues ?? {},
        ...(operationName ? { operationName } : {}),
        estimators: [pageEstimator, simpleEstimator({ defaultComplexity: 1 })],
      });
      if (found > MAX_COMPLEXITY) throw tooComplex('complexity', MAX_COMPLEXITY, found);
    },
  };
}

function isDocument(result: unknown): result is DocumentNode {
  return typeof result === 'object' && result !== null && (result as { kind?: unknown }).kind === Kind.DOCUMENT;
}

/**
 * Reads the document's tokens with graphql-js's lexer (a loop, not a recursion) and refuses it past
 * MAX_TOKENS or MAX_NESTING before the recursive parser sees it. A lexing error is GraphQL's own.
 */
function measureDocument(source: Source): void {
  const lexer = new Lexer(source);
  let tokens = 0;
  let nesting = 0;
  for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
    tokens += 1;
    if (tokens > MAX_TOKENS) throw tooComplex('tokens', MAX_TOKENS, tokens);
    if (OPENING.has(token.kind)) nesting += 1;
    else if (CLOSING.has(token.kind)) nesting -= 1;
    if (nesting > MAX_NESTING) throw tooComplex('nesting', MAX_NESTING, nesting);
  }
}
