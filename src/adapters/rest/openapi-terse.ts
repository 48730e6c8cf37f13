type Node = Record<string, unknown>;

/** Members whose value is a map from names (a member's, a definition's) to schemas: the names are not keywords. */
const NAME_MAPS = new Set(['properties', 'patternProperties', 'dependentSchemas', '$defs']);
const NULL = '{"type":"null"}';

/**
 * `{anyOf: [S, {type: "null"}]}`, as Zod writes a nullable value, in JSON Schema's shorter equal form:
 * S with `type: [<its type>, "null"]` (its other keywords apply to that type only). Only for an S
 * with one named type and nothing that would have to admit null itself (`enum`, `const`, a `$ref`),
 * and no keyword the two share. Answers the schema unchanged otherwise.
 */
function merged(schema: Node): Node {
  const anyOf = schema['anyOf'];
  if (!Array.isArray(anyOf) || anyOf.length !== 2 || JSON.stringify(anyOf[1]) !== NULL) return schema;
  const value = anyOf[0] as Node;
  if (typeof value['type'] !== 'string' || 'enum' in value || 'const' in value || '$ref' in value) return schema;
  const { anyOf: _, ...rest } = schema;
  if (Object.keys(rest).some((key) => key in value)) return schema;
  return { ...value, type: [value['type'], 'null'], ...rest };
}

/**
 * Writes the schemas in a part of the OpenAPI document (its paths, its components) in their
 * shorter equal form: a nullable value as one schema (`merged`), and no `propertyNames:
 * {type: "string"}` (every JSON member name is a string). What they accept, and a generated
 * client's types (openapi-typescript: `string | null` either way), are the same. Answers the value,
 * changed in place.
 */
export function terseSchemas<T>(value: T): T {
  if (Array.isArray(value)) {
    const items: unknown[] = value;
    items.forEach((item, i) => (items[i] = terseSchemas(item)));
    return value;
  }
  if (typeof value !== 'object' || value === null) return value;
  let node = value as Node;
  if (JSON.stringify(node['propertyNames']) === '{"type":"string"}') delete node['propertyNames'];
  node = merged(node);
  for (const [key, member] of Object.entries(node)) {
    if (NAME_MAPS.has(key) && typeof member === 'object' && member !== null) {
      for (const [name, schema] of Object.entries(member)) (member as Node)[name] = terseSchemas(schema);
    } else {
      node[key] = terseSchemas(member);
    }
  }
  return node as T;
}
