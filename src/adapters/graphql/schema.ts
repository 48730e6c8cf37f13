import {
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  GraphQLID,
  GraphQLInt,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLOutputType,
  GraphQLSchema,
  GraphQLString,
  GraphQLUnionType,
  getNamedType,
  getNullableType,
} from 'graphql';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import { type Operation, operationParts, pathParameters } from '../../operations/define-operation.ts';
import { type GraphqlContext, openStream, operationInput, type Projection, runNested, runRead, runWrite, selectedFields } from './resolvers.ts';
import { type GraphqlSchemas, type JsonSchema, pascal, singular, TypeRegistry } from './types.ts';

type Field = GraphQLFieldConfig<unknown, GraphqlContext, Record<string, unknown>>;

/** `tasks_list` → `tasks`, `tasks_get` → `task`, `tasks_events` → `taskEvents`, `whoami` → `whoami`. */
export function queryFieldName(operation: Operation): string {
  const [entity, verb] = operationParts(operation.name);
  if (verb === undefined) return camel(entity);
  if (verb === 'list') return camel(entity);
  if (verb === 'get') return camel(singular(entity));
  return camel(`${singular(entity)}_${verb}`);
}

/** `events_stream` → `events`: a stream is a subscription to the entity it follows. */
export function subscriptionFieldName(operation: Operation): string {
  return camel(operationParts(operation.name)[0]);
}

/**
 * `tasks_create` → `createTask`, `tasks_claim_next` → `claimNextTask`, `leases_heartbeat` → `heartbeatLease`;
 * a verb on many (`leases_release_many`) takes the plural: `releaseLeases`.
 */
export function mutationFieldName(operation: Operation): string {
  const [entity, verb = ''] = operationParts(operation.name);
  if (verb.endsWith('_many')) return camel(`${verb.slice(0, -'_many'.length)}_${entity}`);
  return camel(`${verb}_${singular(entity)}`);
}

function camel(name: string): string {
  const p = pascal(name);
  return p.charAt(0).toLowerCase() + p.slice(1);
}

/** `/tasks/{id}` → `tasks`: the collection of a member path with one parameter. */
function memberOf(path: string): string | undefined {
  return /^\/(\w+)\/\{\w+\}$/.exec(path)?.[1];
}

function isPage(schema: JsonSchema): boolean {
  const p = schema.properties ?? {};
  return p['data']?.type === 'array' && 'has_more' in p && 'next_cursor' in p && 'sync_cursor' in p;
}

/**
 * The GraphQL schema, derived from the registry with no per-operation code: reads become Query
 * fields, writes Mutation fields (see spec/graphql.md for the naming rules), and a read at
 * `/<things>/{id}/<sub>` also becomes field `<sub>` on the type of `/<things>/{id}`, batched.
 */
export function buildGraphqlSchema(operations: readonly Operation[], schemas: GraphqlSchemas): GraphQLSchema {
  const types = new TypeRegistry();
  const outputs = new Map<Operation, GraphQLOutputType>();
  // Entities first, so that the shapes they share with other outputs carry their names.
  const ordered = [...operations.filter((op) => op.kind === 'read' && memberOf(op.http.path)), ...operations];
  for (const op of ordered) {
    if (outputs.has(op)) continue;
    outputs.set(op, getNullableType(outputType(types, op, schemas.output(op.output))));
  }
  const approval = getNamedType(types.output(schemas.output(approvalOutput), 'Approval')) as GraphQLObjectType;


  const query: Record<string, Field> = {};
  const mutation: Record<string, Field> = {};
  const subscription: Record<string, Field> = {};
  for (const op of operations) {
    const input = schemas.input(op.input);
    const projection = projectionOf(input, schemas.output(op.output));
    const output = outputs.get(op) ?? GraphQLString;
    if (op.kind === 'stream') {
      // `view` picks the REST projection; here the selection set does that job.
      const args = argumentsOf(types, op, input, ['view']);
      subscription[subscriptionFieldName(op)] = {
        type: new GraphQLNonNull(output),
        description: op.summary,
        args: args.map,
        subscribe: (_source, raw, ctx) => openStream(ctx, op, { ...operationInput(raw, args.nullable), view: 'full' }),
        resolve: (item: unknown) => item,
      };
    } else if (op.kind === 'read') {
      const args = argumentsOf(types, op, input, projection ? ['fields', 'view'] : []);
      query[queryFieldName(op)] = {
        type: output,
        description: op.summary,
        args: args.map,
        resolve: (_source, raw, ctx, info) =>
          runRead(ctx, op, { ...operationInput(raw, args.nullable), ...(projection ? { fields: selectedFields(info, projection) } : {}) }),
      };
      addRelation(types, outputs, op, args, projection);
    } else {
      const args = argumentsOf(types, op, input, []);
      const versioned = op.version !== undefined && pathParameters(op.http.path).length > 0;
      args.map['idempotency_key'] = { type: GraphQLString, description: 'Your Idempotency-Key for this write; a fresh one is made when omitted. Either way it is returned in `extensions.idempotency`.' };
      if (versioned) args.map['expected_version'] = { type: GraphQLInt, description: 'The version you read (REST If-Match); a mismatch is `conflict_version`.' };
      mutation[mutationFieldName(op)] = {
        type: op.approval === 'none' ? output : gatedResult(op, output, approval),
        description: op.summary,
        args: args.map,
        resolve: (_source, raw, ctx, info) => {
          const { idempotency_key: key, expected_version: version, ...rest } = raw;
          return runWrite(
            ctx,
            op,
            { idempotencyKey: typeof key === 'string' ? key : undefined, expectedVersion: typeof version === 'number' ? version : undefined, input: operationInput(rest, args.nullable) },
            String(info.path.key),
          );
        },
      };
    }
  }
  return new GraphQLSchema({
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }),
    ...(Object.keys(subscription).length > 0 ? { subscription: new GraphQLObjectType({ name: 'Subscription', fields: subscription }) } : {}),
  });
}

/** An entity (`/tasks/{id}` → `Task`), a page of one (`TaskPage`), or `<Field>Result`. */
function outputType(types: TypeRegistry, op: Operation, schema: JsonSchema): GraphQLOutputType {
  const member = memberOf(op.http.path);
  if (op.kind === 'read' && member) return types.output(schema, pascal(singular(member)));
  const items = isPage(schema) ? schema.properties?.['data']?.items : undefined;
  if (items) {
    const segment = op.http.path.split('/').filter((s) => s && !s.startsWith('{')).at(-1) ?? op.name;
    const item = getNamedType(types.output(items, pascal(singular(segment))));
    return types.output(schema, `${item.name}Page`);
  }
  const field = op.kind === 'read' ? queryFieldName(op) : op.kind === 'stream' ? subscriptionFieldName(op) : mutationFieldName(op);
  // A gated write's field is the union `<Field>Result` (gatedResult), so its own output is `<Field>Success`.
  const suffix = op.kind === 'stream' ? 'Item' : op.kind === 'write' && op.approval !== 'none' ? 'Success' : 'Result';
  return types.output(schema, `${pascal(field)}${suffix}`);
}

interface Arguments {
  map: GraphQLFieldConfigArgumentMap;
  /** Arguments whose schema accepts null, so an explicit null is passed on rather than dropped. */
  nullable: Set<string>;
}

function argumentsOf(types: TypeRegistry, op: Operation, input: JsonSchema, skip: readonly string[]): Arguments {
  const required = new Set(input.required ?? []);
  const map: GraphQLFieldConfigArgumentMap = {};
  const nullable = new Set<string>();
  for (const [name, schema] of Object.entries(input.properties ?? {})) {
    if (skip.includes(name)) continue;
    // Ids are `ID`, as on the objects, so a client can pass an object's id straight back.
    const type = name === 'id' ? new GraphQLNonNull(GraphQLID) : types.input(schema, `${pascal(op.name)}${pascal(name)}`, required.has(name));
    map[name] = { type, description: schema.description, ...(schema.default !== undefined ? { defaultValue: schema.default } : {}) };
    if (schema.anyOf?.some((s) => s.type === 'null') || (Array.isArray(schema.type) && schema.type.includes('null'))) nullable.add(name);
  }
  return { map, nullable };
}

/** Operations with a `fields` input take it from the GraphQL selection instead of an argument. */
function projectionOf(input: JsonSchema, output: JsonSchema): Projection | undefined {
  if (!input.properties?.['fields']) return undefined;
  const object = isPage(output) ? output.properties?.['data']?.items : output;
  return { under: isPage(output) ? 'data' : undefined, names: new Set(Object.keys(object?.properties ?? {})) };
}

/** `/tasks/{id}/events` also becomes `events` on the type `/tasks/{id}` returns, resolved in batches. */
function addRelation(types: TypeRegistry, outputs: Map<Operation, GraphQLOutputType>, op: Operation, args: Arguments, projection: Projection | undefined): void {
  const match = /^(\/\w+\/\{(\w+)\})\/(\w+)$/.exec(op.http.path);
  if (!match) return;
  const [, parentPath, param = 'id', field = ''] = match;
  const parentOp = [...outputs.keys()].find((o) => o.kind === 'read' && o.http.path === parentPath);
  const parent = parentOp && getNamedType(outputs.get(parentOp));
  if (!(parent instanceof GraphQLObjectType)) return;
  const { [param]: _parent, ...map } = args.map;
  types.addField(parent, field, {
    type: outputs.get(op) ?? GraphQLString,
    description: op.summary,
    args: map,
    resolve: (source, raw: Record<string, unknown>, ctx: GraphqlContext, info) =>
      runNested(ctx, op, { ...operationInput(raw, args.nullable), ...(projection ? { fields: selectedFields(info, projection) } : {}) }, (source as { id: string }).id),
  } as GraphQLFieldConfig<unknown, unknown>);
}

/** A gated write answers its own output, or the pending approval made instead (REST's 202). */
function gatedResult(op: Operation, output: GraphQLOutputType, approval: GraphQLObjectType): GraphQLOutputType {
  const ran = getNamedType(output);
  if (!(ran instanceof GraphQLObjectType)) return output;
  return new GraphQLUnionType({
    name: `${pascal(mutationFieldName(op))}Result`,
    description: `${ran.name} when it ran; Approval when it waits for a human's approval.`,
    types: [ran, approval],
    resolveType: (value: object, ctx: GraphqlContext) => (ctx.pendingApprovals.has(value) ? approval.name : ran.name),
  });
}
