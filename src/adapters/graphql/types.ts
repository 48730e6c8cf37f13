import { ACTOR_KINDS, PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLFloat,
  GraphQLID,
  GraphQLInputObjectType,
  type GraphQLInputType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigMap,
  type GraphQLOutputType,
  GraphQLScalarType,
  GraphQLString,
  valueFromASTUntyped,
} from 'graphql';
import type { z } from 'zod';

/** The JSON Schema subset `z.toJSONSchema` emits for Baton's operations. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  anyOf?: JsonSchema[];
  additionalProperties?: boolean | JsonSchema;
  description?: string;
  default?: unknown;
}

/** The server's derivation (../json-schema.ts), typed as the subset the GraphQL types read. */
export interface GraphqlSchemas {
  input(schema: z.ZodType): JsonSchema;
  output(schema: z.ZodType): JsonSchema;
}

/** Free-form JSON (records such as an event's `data`, an approval's `input`), passed through as is. */
export const JsonScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value, as the REST API returns it.',
  serialize: (value) => value,
  parseValue: (value) => value,
  parseLiteral: (ast, variables) => valueFromASTUntyped(ast, variables),
});

const SCALARS: Partial<Record<string, GraphQLScalarType>> = { string: GraphQLString, integer: GraphQLInt, number: GraphQLFloat, boolean: GraphQLBoolean };

const GRAPHQL_NAME = /^[_A-Za-z][_0-9A-Za-z]*$/;

export function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('');
}

/** `tasks` → `task`, `deliveries` → `delivery`. */
export function singular(name: string): string {
  if (name.endsWith('ies')) return `${name.slice(0, -3)}y`;
  return name.endsWith('s') ? name.slice(0, -1) : name;
}

/** Enums of the domain, named for what they are wherever they are first met (not `TaskLeaseHolderKind` on an Agent). */
const DOMAIN_ENUMS = new Map<string, string>([
  [enumKey(PRINCIPAL_KINDS), 'PrincipalKind'],
  [enumKey(ACTOR_KINDS), 'ActorKind'],
]);

function enumKey(values: readonly string[]): string {
  return [...values].sort().join('|');
}

/** Splits `anyOf [X, null]` and `type: [t, 'null']` into X and whether null is allowed. */
function withoutNull(schema: JsonSchema): { inner: JsonSchema; nullable: boolean } {
  if (schema.anyOf) {
    const rest = schema.anyOf.filter((s) => s.type !== 'null');
    if (rest.length === 1 && rest[0]) return { inner: { ...rest[0], description: schema.description ?? rest[0].description }, nullable: rest.length < schema.anyOf.length };
    return { inner: {}, nullable: true };
  }
  if (Array.isArray(schema.type)) {
    const types = schema.type.filter((t) => t !== 'null');
    return { inner: { ...schema, type: types.length === 1 ? types[0] : undefined }, nullable: types.length < schema.type.length };
  }
  return { inner: schema, nullable: false };
}

/** A structural key that ignores prose, so one Zod schema described twice still makes one type. */
function shapeKey(schema: JsonSchema): string {
  return JSON.stringify(schema, (key, value: unknown) => (key === 'description' || key === 'default' ? undefined : value));
}

/**
 * Turns operation JSON Schemas into GraphQL types. Objects of the same shape become one type,
 * named where first met (so callers name the entities first); enums of the same values likewise.
 * Object types take their fields lazily, so relation fields can be added before the schema is built.
 */
export class TypeRegistry {
  private readonly objects = new Map<string, GraphQLObjectType>();
  private readonly inputs = new Map<string, GraphQLInputObjectType>();
  private readonly enums = new Map<string, GraphQLEnumType>();
  private readonly names = new Set<string>();
  private readonly extraFields = new Map<string, GraphQLFieldConfigMap<unknown, unknown>>();

  /** A nullable-aware output type for a JSON Schema; `name` names a new object or enum type. */
  output(schema: JsonSchema, name: string, required = true): GraphQLOutputType {
    const { inner, nullable } = withoutNull(schema);
    const type = this.outputInner(inner, name);
    return required && !nullable ? new GraphQLNonNull(type) : type;
  }

  input(schema: JsonSchema, name: string, required: boolean): GraphQLInputType {
    const { inner, nullable } = withoutNull(schema);
    const type = this.inputInner(inner, name);
    return required && !nullable && schema.default === undefined ? new GraphQLNonNull(type) : type;
  }

  /** The object type already made for this shape, if any. */
  objectFor(schema: JsonSchema): GraphQLObjectType | undefined {
    return this.objects.get(shapeKey(withoutNull(schema).inner));
  }

  /** Adds a field to an object type after the fact (relations between types). */
  addField(type: GraphQLObjectType, name: string, field: GraphQLFieldConfig<unknown, unknown>): void {
    const fields = this.extraFields.get(type.name) ?? {};
    fields[name] = field;
    this.extraFields.set(type.name, fields);
  }

  private unique(name: string): string {
    let candidate = name;
    for (let n = 2; this.names.has(candidate); n++) candidate = `${name}${n}`;
    this.names.add(candidate);
    return candidate;
  }

  private outputInner(schema: JsonSchema, name: string): GraphQLOutputType {
    const scalar = this.scalarOrEnum(schema, name);
    if (scalar) return scalar;
    if (schema.type === 'array' && schema.items) return new GraphQLList(this.output(schema.items, singular(name)));
    if (schema.type === 'object' && schema.properties) {
      const key = shapeKey(schema);
      const known = this.objects.get(key);
      if (known) return known;
      const properties = schema.properties;
      const required = new Set(schema.required ?? []);
      const typeName = this.unique(name);
      // Own fields now (so nested types are named in this order), relations when the schema is built.
      const own = Object.fromEntries(
        Object.entries(properties).map(([field, s]) => [
          field,
          { type: field === 'id' ? this.idType(s, required.has(field)) : this.output(s, typeName + pascal(field), required.has(field)), description: s.description },
        ]),
      );
      const type: GraphQLObjectType = new GraphQLObjectType({ name: typeName, fields: () => ({ ...own, ...this.extraFields.get(typeName) }) });
      this.objects.set(key, type);
      return type;
    }
    return JsonScalar;
  }

  private inputInner(schema: JsonSchema, name: string): GraphQLInputType {
    const scalar = this.scalarOrEnum(schema, name);
    if (scalar) return scalar;
    if (schema.type === 'array' && schema.items) return new GraphQLList(this.input(schema.items, singular(name), true));
    if (schema.type === 'object' && schema.properties) {
      const key = shapeKey(schema);
      const known = this.inputs.get(key);
      if (known) return known;
      const properties = schema.properties;
      const required = new Set(schema.required ?? []);
      const type = new GraphQLInputObjectType({
        name: this.unique(`${name}Input`),
        fields: () => Object.fromEntries(Object.entries(properties).map(([field, s]) => [field, { type: this.input(s, name + pascal(field), required.has(field)), description: s.description }])),
      });
      this.inputs.set(key, type);
      return type;
    }
    return JsonScalar;
  }

  private idType(schema: JsonSchema, required: boolean) {
    const { nullable } = withoutNull(schema);
    return required && !nullable ? new GraphQLNonNull(GraphQLID) : GraphQLID;
  }

  private scalarOrEnum(schema: JsonSchema, name: string): GraphQLScalarType | GraphQLEnumType | undefined {
    const values = schema.enum;
    if (values?.every((v): v is string => typeof v === 'string' && GRAPHQL_NAME.test(v))) {
      const key = enumKey(values);
      let type = this.enums.get(key);
      if (!type) {
        type = new GraphQLEnumType({ name: this.unique(DOMAIN_ENUMS.get(key) ?? name), values: Object.fromEntries(values.map((v) => [v, { value: v }])) });
        this.enums.set(key, type);
      }
      return type;
    }
    return typeof schema.type === 'string' ? SCALARS[schema.type] : undefined;
  }
}
