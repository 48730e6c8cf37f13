import { type ExecutionArgs, type ExecutionResult, getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Tracing } from '../../tracing.ts';

/**
 * A span per executed GraphQL operation, named `query tasks` (type and operation name), active
 * while its resolvers run so their statements are its children. The document text is not
 * recorded (variables may hold anything). Tracing off: no plugin.
 */
export function traceOperations(tracing: Tracing): Plugin[] {
  if (!tracing.enabled) return [];
  return [
    {
      onExecute({ args, executeFn, setExecuteFn }) {
        const { document, operationName } = args as ExecutionArgs;
        const operation = getOperationAST(document, operationName);
        const type = operation?.operation ?? 'query';
        const name = operation?.name?.value;
        const attributes = { 'graphql.operation.type': type, ...(name ? { 'graphql.operation.name': name } : {}) };
        setExecuteFn((executeArgs) => tracing.inSpan(name ? `${type} ${name}` : type, 'internal', attributes, async () => executeFn(executeArgs) as ExecutionResult | AsyncIterable<ExecutionResult>));
      },
    },
  ];
}
