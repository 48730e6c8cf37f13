/**
 * The published rules two model vendors hold a tool's input schema to, as pure checkers: each
 * answers the rules a schema breaks (none: accepted). Issue 38, target 3.
 */
type Schema = Record<string, unknown>;

/**
 * OpenAI strict function calling (`strict: true`), "Structured Outputs, Supported schemas"
 * (https://platform.openai.com/docs/guides/structured-outputs#supported-schemas; function calling
 * validates a strict tool's `parameters` by it, per https://platform.openai.com/docs/guides/function-calling):
 * - the root is an object, not an `anyOf`;
 * - every object sets `additionalProperties: false` and lists every property in `required`
 *   (an optional field is a union with null);
 * - only the supported keywords: types string, number, boolean, integer, object, array, null; `enum`,
 *   `anyOf`, `$ref`/`$defs`; for strings `pattern` and `format` (date-time, time, date, duration,
 *   email, hostname, ipv4, ipv6, uuid); for numbers `minimum`, `maximum`, `exclusiveMinimum`,
 *   `exclusiveMaximum`, `multipleOf`; for arrays `minItems`, `maxItems`. Not `minLength`,
 *   `maxLength`, `default`, `oneOf`, `allOf`, `not`, `patternProperties`, …;
 * - at most 5,000 object properties in all and 10 levels of nesting (the first release said 100
 *   and 5; these schemas keep to the older, tighter figures, so both hold).
 */
export function openAiStrictIssues(schema: Schema): string[] {
  const issues: string[] = [];
  if (schema['type'] !== 'object') issues.push('/: the root is not an object');
  if ('anyOf' in schema) issues.push('/: anyOf at the root');
  let properties = 0;
  const walk = (node: Schema, path: string, depth: number) => {
    for (const key of Object.keys(node)) if (!OPENAI_KEYWORDS.has(key)) issues.push(`${path}: unsupported keyword ${key}`);
    if (typeof node['format'] === 'string' && !OPENAI_FORMATS.has(node['format'])) issues.push(`${path}: unsupported format ${node['format']}`);
    const types = [node['type']].flat();
    if (types.some((type) => type !== undefined && !OPENAI_TYPES.has(type as string))) issues.push(`${path}: unsupported type ${JSON.stringify(node['type'])}`);
    if (types.includes('object')) {
      if (depth > 5) issues.push(`${path}: nested deeper than 5 levels`);
      if (node['additionalProperties'] !== false) issues.push(`${path}: additionalProperties is not false`);
      const props = (node['properties'] ?? {}) as Record<string, Schema>;
      const required = new Set((node['required'] ?? []) as string[]);
      for (const name of Object.keys(props)) if (!required.has(name)) issues.push(`${path.replace(/\/$/, '')}/${name}: not in required`);
      properties += Object.keys(props).length;
      for (const [name, member] of Object.entries(props)) walk(member, `${path.replace(/\/$/, '')}/${name}`, depth + 1);
    }
    if (typeof node['items'] === 'object') walk(node['items'] as Schema, `${path.replace(/\/$/, '')}/items`, depth);
    for (const [i, branch] of ((node['anyOf'] ?? []) as Schema[]).entries()) walk(branch, `${path.replace(/\/$/, '')}/anyOf/${i}`, depth);
  };
  walk(schema, '/', 1);
  if (properties > 100) issues.push(`/: ${properties} object properties (more than 100)`);
  return issues;
}

const OPENAI_TYPES = new Set(['string', 'number', 'boolean', 'integer', 'object', 'array', 'null']);
const OPENAI_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'ipv4', 'ipv6', 'uuid']);
const OPENAI_KEYWORDS = new Set([
  'type', 'description', 'title', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', '$ref', '$defs',
  'pattern', 'format', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minItems', 'maxItems',
]);

/**
 * Anthropic's Messages API tools (https://docs.claude.com/en/docs/agents-and-tools/tool-use/implement-tool-use):
 * a tool's `name` matches `^[a-zA-Z0-9_-]{1,64}$` and its `input_schema` is a JSON Schema object
 * whose root `type` is `"object"`. With `strict: true` (strict tool use, "JSON Schema limitations" in
 * https://docs.claude.com/en/docs/build-with-claude/structured-outputs) every object also sets
 * `additionalProperties: false`, and these are refused: numeric bounds (`minimum`, `maximum`,
 * `multipleOf`), string lengths (`minLength`, `maxLength`), array bounds beyond `minItems` 0 or 1,
 * `maxItems`, and formats other than date-time, time, date, duration, email, hostname, uri, ipv4, ipv6, uuid.
 */
export function anthropicIssues(tool: { name: string; inputSchema: Schema }, strict: boolean): string[] {
  const issues: string[] = [];
  if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) issues.push(`name ${tool.name} does not match ^[a-zA-Z0-9_-]{1,64}$`);
  if (tool.inputSchema['type'] !== 'object') issues.push('/: input_schema is not of type object');
  if (!strict) return issues;
  const walk = (node: Schema, path: string) => {
    for (const key of Object.keys(node)) if (ANTHROPIC_STRICT_REFUSED.has(key)) issues.push(`${path}: ${key} is refused in strict mode`);
    if (typeof node['minItems'] === 'number' && node['minItems'] > 1) issues.push(`${path}: minItems above 1`);
    if (typeof node['format'] === 'string' && !ANTHROPIC_FORMATS.has(node['format'])) issues.push(`${path}: unsupported format ${node['format']}`);
    if ([node['type']].flat().includes('object') && node['additionalProperties'] !== false) issues.push(`${path}: additionalProperties is not false`);
    for (const [name, member] of Object.entries((node['properties'] ?? {}) as Record<string, Schema>)) walk(member, `${path.replace(/\/$/, '')}/${name}`);
    if (typeof node['items'] === 'object') walk(node['items'] as Schema, `${path.replace(/\/$/, '')}/items`);
    for (const [i, branch] of ((node['anyOf'] ?? []) as Schema[]).entries()) walk(branch, `${path.replace(/\/$/, '')}/anyOf/${i}`);
  };
  walk(tool.inputSchema, '/');
  return issues;
}

const ANTHROPIC_STRICT_REFUSED = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'maxItems']);
const ANTHROPIC_FORMATS = new Set(['date-time', 'time', 'date', 'duration', 'email', 'hostname', 'uri', 'ipv4', 'ipv6', 'uuid']);
