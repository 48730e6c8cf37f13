import { getNamedType, GraphQLEnumType, type GraphQLSchema } from 'graphql';
import type { Dialect } from '../../errors.ts';
import type { Operation } from '../../operations/define-operation.ts';
import { mutationFieldName, queryFieldName } from './schema.ts';

/**
 * Hints over GraphQL name fields: `[[leases_list holder=me state=active]]` is the
 * `leases(holder: "me", state: active)` query (enum values bare, as GraphQL writes them).
 */
export function graphqlDialect(schema: GraphQLSchema, operations: readonly Operation[]): Dialect {
  return {
    call(name, args) {
      const operation = operations.find((op) => op.name === name);
      if (!operation || operation.kind === 'stream') return `\`${name}\``;
      const [field, root, kind] =
        operation.kind === 'read' ? [queryFieldName(operation), schema.getQueryType(), 'query'] : [mutationFieldName(operation), schema.getMutationType(), 'mutation'];
      const declared = root?.getFields()[field]?.args ?? [];
      const written = Object.entries(args).map(([arg, value]) => {
        const type = declared.find((a) => a.name === arg)?.type;
        return `${arg}: ${type && getNamedType(type) instanceof GraphQLEnumType ? value : JSON.stringify(value)}`;
      });
      return `the \`${field}${written.length > 0 ? `(${written.join(', ')})` : ''}\` ${kind}`;
    },
    idempotencyKey: '`idempotency_key`',
    expectedVersion: '`expected_version`',
    schema: 'the GraphQL schema (introspect POST /graphql)',
    fieldLocations: false,
    retryAfter: '`retry_after_s`',
  };
}
