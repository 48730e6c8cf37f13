import { maxDepthRule } from '@escape.tech/graphql-armor-max-depth';
import { getComplexity, simpleEstimator, type ComplexityEstimator } from 'graphql-query-complexity';
import { type ExecutionArgs, getNamedType, getNullableType, GraphQLError, type GraphQLOutputType, isListType, isObjectType } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { BatonError } from '../../errors.ts';

/** Deepest selection allowed (introspection's `__schema` aside); Baton's deepest useful one is 6. */
export const MAX_DEPTH = 8;
/** Costliest query allowed: one point per field, times `limit` under a field that takes one. */
export const MAX_COMPLEXITY = 10_000;
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

function tooComplex(measure: 'depth' | 'complexity', limit: number, found: number): BatonError {
  return new BatonError('query_too_complex', `The query's ${measure} is ${found}; the limit is ${limit}.`, { extra: { measure, limit, found } });
}

/**
 * Refuses abusive queries before they run: depth while validating (it does not depend on
 * variables), cost just before executing (page sizes may come from variables).
 */
export function queryLimits(): Plugin {
  return {
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
