import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * JSON Schema (2020-12 vocabulary) derived from a Zod schema, for OpenAPI and MCP tools. The
 * `$schema` member is left out: both documents state their dialect once, and validators that
 * default to draft-07 (the 1.x MCP client's Ajv) would refuse a schema naming 2020-12.
 */
export function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' });
  return rest;
}
