import type { JsonSchema } from '../json-schema.ts';

/**
 * How input schemas are listed: `loose`, the schema the server checks (less what `leanSchema`
 * leaves out), or `strict` (`/mcp?schemas=strict`), which OpenAI's strict function calling and
 * Anthropic's strict tool use accept: every member required, an optional one nullable, and only
 * keywords both take (spec/mcp.md, "Strict schemas").
 */
export type SchemaMode = 'loose' | 'strict';

/** The keywords both strict engines take (OpenAI's adds numeric and count bounds, which Anthropic's refuses). */
const STRICT_KEYWORDS = new Set(['type', 'description', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'anyOf', 'pattern', 'format']);
/** The string formats both name. */
const STRICT_FORMATS = new Set(['date-time', 'date', 'time', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
/** What a strict caller sends to clear an optional member that takes null (`null` there means "absent"). */
const CLEAR = 'none';

const NULL: JsonSchema = { type: 'null' };

/** Whether a (loose) member schema takes null. */
function takesNull(schema: JsonSchema): boolean {
  const { type, anyOf } = schema;
  return type === 'null' || (Array.isArray(type) && type.includes('null')) || (Array.isArray(anyOf) && (anyOf as JsonSchema[]).some(takesNull));
}

/**
 * The strict form of a tool's (loose) input schema. An optional member becomes required and
 * nullable, `null` standing for "absent"; one that took null already (to clear a value) takes
 * `"none"` for that. A default is said in the description; bounds the engines refuse are left to the server.
 */
export function strictSchema(schema: JsonSchema): JsonSchema {
  return strictNode(schema, false);
}

/** A map with free keys (a record): no named members, each value by `additionalProperties`. */
function mapValues(schema: JsonSchema): JsonSchema | undefined {
  const values = schema['additionalProperties'];
  return schema['type'] === 'object' && schema['properties'] === undefined && typeof values === 'object' && values !== null ? (values as JsonSchema) : undefined;
}

/** A map in strict form: strict engines take no free keys, so it is a list of `{key, value}` pairs. */
function strictMap(schema: JsonSchema, values: JsonSchema): JsonSchema {
  const said = typeof schema['description'] === 'string' ? `${schema['description']} ` : '';
  return {
    type: 'array',
    description: `${said}A list of {key, value} pairs.`,
    items: { type: 'object', properties: { key: { type: 'string' }, value: strictNode(values, false) }, required: ['key', 'value'], additionalProperties: false },
  };
}

function strictNode(schema: JsonSchema, optional: boolean): JsonSchema {
  const values = mapValues(schema);
  if (values) return optional ? { anyOf: [strictMap(schema, values), NULL] } : strictMap(schema, values);
  const node: JsonSchema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!STRICT_KEYWORDS.has(key) || (key === 'format' && !STRICT_FORMATS.has(value as string))) continue;
    if (key === 'items') node[key] = strictNode(value as JsonSchema, false);
    else if (key === 'anyOf') node[key] = (value as JsonSchema[]).map((branch) => strictNode(branch, false));
    else node[key] = value;
  }
  if ('default' in schema) node['description'] = `${(node['description'] as string | undefined) ?? ''}${node['description'] ? ' ' : ''}Default ${JSON.stringify(schema['default'])}.`;
  if (schema['type'] === 'object' && typeof schema['properties'] === 'object') {
    const properties = schema['properties'] as Record<string, JsonSchema>;
    const required = new Set((schema['required'] as string[] | undefined) ?? []);
    node['properties'] = Object.fromEntries(Object.entries(properties).map(([name, member]) => [name, strictNode(member, !required.has(name))]));
    node['required'] = Object.keys(properties);
    node['additionalProperties'] = false;
  }
  if (!optional) return node;
  if (takesNull(schema)) {
    const { anyOf, description, ...rest } = node;
    const branches = Array.isArray(anyOf) ? (anyOf as JsonSchema[]).filter((branch) => branch['type'] !== 'null') : [rest];
    return { ...(description === undefined ? {} : { description }), anyOf: [...branches, { type: 'string', enum: [CLEAR] }, NULL] };
  }
  if (typeof node['type'] === 'string') {
    return { ...node, type: [node['type'], 'null'], ...(Array.isArray(node['enum']) ? { enum: [...(node['enum'] as unknown[]), null] } : {}) };
  }
  return { anyOf: [node, NULL] };
}

/**
 * A strict caller's arguments as the operation takes them: an optional member sent as `null` is
 * left out, and one sent as `"none"` that takes null is null (cleared), by the tool's loose schema.
 */
export function fromStrict(value: unknown, schema: JsonSchema): unknown {
  const values = mapValues(schema);
  if (values && Array.isArray(value)) {
    return Object.fromEntries(value.map((pair: { key?: unknown; value?: unknown } | null) => [String(pair?.key), fromStrict(pair?.value, values)]));
  }
  if (Array.isArray(value)) return typeof schema['items'] === 'object' ? value.map((item) => fromStrict(item, schema['items'] as JsonSchema)) : value;
  if (typeof value !== 'object' || value === null || typeof schema['properties'] !== 'object') return value;
  const properties = schema['properties'] as Record<string, JsonSchema>;
  const required = new Set((schema['required'] as string[] | undefined) ?? []);
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    const memberSchema = properties[name];
    if (memberSchema === undefined || required.has(name)) {
      out[name] = memberSchema === undefined ? member : fromStrict(member, memberSchema);
      continue;
    }
    if (member === null) continue;
    out[name] = member === CLEAR && takesNull(memberSchema) ? null : fromStrict(member, memberSchema);
  }
  return out;
}
