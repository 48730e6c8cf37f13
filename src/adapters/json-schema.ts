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
export function jsonSchema(schema: z.ZodType, io: 'output'): JsonSchema;
export function jsonSchema(schema: z.ZodType, io: 'input', config: Config): JsonSchema;
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output', config?: Config): JsonSchema {
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
