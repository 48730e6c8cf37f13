import { z } from 'zod';
import type { Config } from '../config.ts';
import { boundsOf, CONFIGURED_BOUND_KEY, type ConfiguredBound } from '../operations/configured-bounds.ts';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema (2020-12 vocabulary) derived from a Zod schema, for OpenAPI, MCP tools and GraphQL.
 * The `$schema` member is left out: both documents state their dialect once, and validators that
 * default to draft-07 (the 1.x MCP client's Ajv) would refuse a schema naming 2020-12. An input
 * schema is derived for one server: parameters bounded by its config carry its bounds.
 */
function jsonSchema(schema: z.ZodType, io: 'output'): JsonSchema;
function jsonSchema(schema: z.ZodType, io: 'input', config: Config): JsonSchema;
function jsonSchema(schema: z.ZodType, io: 'input' | 'output', config?: Config): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, {
    io,
    unrepresentable: 'any',
    target: 'draft-2020-12',
    override: ({ jsonSchema: node }) => {
      const bound = node[CONFIGURED_BOUND_KEY] as ConfiguredBound | undefined;
      if (bound === undefined) return;
      delete node[CONFIGURED_BOUND_KEY];
      if (config) Object.assign(node, boundsOf(bound, config));
    },
  });
  return rest;
}

/** One server's JSON Schemas: the OpenAPI document, the MCP tools and the GraphQL schema read the same ones. */
export interface JsonSchemas {
  /** An operation's input, with this server's configured bounds. */
  input(schema: z.ZodType): JsonSchema;
  output(schema: z.ZodType): JsonSchema;
}

/**
 * Derives each Zod schema once for this server and freezes what it derives, since every interface
 * reads the same object (a reader that needs a changed copy makes one). Each interface deriving its
 * own took about a fifth of a server's start (and of every test server's).
 */
export function jsonSchemas(config: Config): JsonSchemas {
  const inputs = new WeakMap<z.ZodType, JsonSchema>();
  const outputs = new WeakMap<z.ZodType, JsonSchema>();
  const once = (derived: WeakMap<z.ZodType, JsonSchema>, schema: z.ZodType, derive: () => JsonSchema): JsonSchema => {
    let found = derived.get(schema);
    if (!found) derived.set(schema, (found = deepFreeze(derive())));
    return found;
  };
  return {
    input: (schema) => once(inputs, schema, () => jsonSchema(schema, 'input', config)),
    output: (schema) => once(outputs, schema, () => jsonSchema(schema, 'output')),
  };
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const member of Object.values(value)) deepFreeze(member);
  }
  return value;
}
