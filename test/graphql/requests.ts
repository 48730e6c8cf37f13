import { type GraphQLField, type GraphQLOutputType, getNamedType, isInputType, isObjectType, isUnionType } from 'graphql';
import { buildGraphqlSchema, mutationFieldName, queryFieldName } from '../../src/adapters/graphql/schema.ts';
import { jsonSchemas } from '../../src/adapters/json-schema.ts';
import { loadConfig } from '../../src/config.ts';
import type { Operation } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import type { OperationRequest } from '../security/operation-requests.ts';

const schema = buildGraphqlSchema(operations, jsonSchemas(loadConfig({})));

/** The operation's root field: a query for a read, a mutation for a write. */
export function fieldOf(op: Operation): GraphQLField<unknown, unknown> {
  const root = op.kind === 'read' ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[op.kind === 'read' ? queryFieldName(op) : mutationFieldName(op)];
  if (!field) throw new Error(`${op.name} has no GraphQL field`);
  return field;
}

/** Every field of the type, nested, leaving out relations (fields with arguments). */
function selection(type: GraphQLOutputType): string {
  const named = getNamedType(type);
  // Members' same-named fields may differ in type (a GraphQL conflict): the first member in full, the others by id.
  if (isUnionType(named)) return `{ ${named.getTypes().map((member, i) => `... on ${member.name} ${i === 0 ? selection(member) : '{ id }'}`).join(' ')} }`;
  if (!isObjectType(named)) return '';
  const fields = Object.values(named.getFields()).filter((f) => f.args.length === 0);
  return `{ ${fields.map((f) => `${f.name} ${selection(f.type)}`).join(' ')} }`;
}

/** The REST request as GraphQL, selecting every field: path parameters, query and body become the field's arguments. */
export function graphqlRequest(op: Operation, request: OperationRequest): { query: string; variables: Record<string, unknown> } {
  const field = fieldOf(op);
  const values: Record<string, unknown> = { ...request.params, ...request.body };
  for (const [name, value] of new URLSearchParams(request.query ?? '')) {
    const arg = field.args.find((a) => a.name === name);
    values[name] = arg && String(getNamedType(arg.type)) === 'Int' ? Number(value) : value;
  }
  const used = field.args.filter((a) => a.name in values && isInputType(a.type));
  const declared = used.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const passed = used.map((a) => `${a.name}: $${a.name}`).join(', ');
  const kind = op.kind === 'read' ? 'query' : 'mutation';
  return { query: `${kind}${declared ? ` (${declared})` : ''} { ${field.name}${passed ? `(${passed})` : ''} ${selection(field.type)} }`, variables: values };
}
