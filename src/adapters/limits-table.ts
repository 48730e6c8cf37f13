import type { JsonSchema } from './json-schema.ts';

interface DocumentOperation {
  operationId: string;
  parameters?: { name: string; in: string; schema?: unknown }[];
  requestBody?: { content: Record<string, { schema?: unknown }> };
}

/** One bounded input: where it goes, its name (a dotted path into the body), and its bound in words. */
export interface InputLimit {
  location: string;
  name: string;
  bound: string;
}

const count = (n: number) => n.toLocaleString('en-US');

/** A schema, a `#/components/schemas/…` reference followed (the document names the schemas several operations share). */
type Resolve = (schema: JsonSchema) => JsonSchema;

function resolver(schemas: Record<string, unknown>): Resolve {
  const resolve = (schema: JsonSchema): JsonSchema => {
    const ref = schema['$ref'];
    if (typeof ref !== 'string' || !ref.startsWith('#/components/schemas/')) return schema;
    const target = schemas[ref.slice('#/components/schemas/'.length)];
    if (target === undefined) throw new Error(`unresolved ${ref}`);
    return resolve(target as JsonSchema);
  };
  return resolve;
}

/** The bound of one schema in words, or null for one with nothing to bound (an enum, a boolean). */
function describe(schema: JsonSchema, resolve: Resolve): string | null {
  const s = resolve(schema) as { type?: unknown; enum?: unknown; anyOf?: JsonSchema[]; minLength?: number; maxLength?: number; minItems?: number; maxItems?: number; minimum?: number; maximum?: number; pattern?: string; items?: JsonSchema };
  if (s.anyOf) return s.anyOf.map((a) => describe(a, resolve)).filter((d) => d !== null).join(' or ') || null;
  // A nullable value (`type: ["string", "null"]`) is bounded as its other type.
  const type: unknown = Array.isArray(s.type) ? s.type.filter((t) => t !== 'null').join() || 'null' : s.type;
  if (s.enum !== undefined || type === 'boolean' || type === 'null') return null;
  if (type === 'string') {
    if (s.maxLength !== undefined) return `${count(s.minLength ?? 0)}–${count(s.maxLength)} characters`;
    return s.pattern ? `matches \`${s.pattern}\`` : 'unbounded';
  }
  if (type === 'integer' || type === 'number') return s.maximum !== undefined ? `${count(s.minimum ?? Number.MIN_SAFE_INTEGER)}–${count(s.maximum)}` : 'unbounded';
  if (type === 'array') {
    const item = s.items ? describe(s.items, resolve) : null;
    const items = s.maxItems !== undefined ? `${count(s.minItems ?? 0)}–${count(s.maxItems)} items` : 'unbounded items';
    return item ? `${items}, each ${item}` : items;
  }
  return null;
}

/**
 * Every bounded input of one operation in the OpenAPI document: its parameters (path, query,
 * header) and its JSON body's fields, nested objects by dotted name. `schemas` are the document's
 * components, which the operation's schemas may refer to.
 */
export function inputLimits(op: DocumentOperation, schemas: Record<string, unknown>): InputLimit[] {
  const resolve = resolver(schemas);
  const limits: InputLimit[] = [];
  for (const p of op.parameters ?? []) {
    const bound = p.schema ? describe(p.schema as JsonSchema, resolve) : null;
    if (bound) limits.push({ location: p.in, name: p.name, bound });
  }
  const walk = (schema: JsonSchema | undefined, prefix: string) => {
    const properties = (schema && (resolve(schema) as { properties?: Record<string, JsonSchema> }).properties) ?? {};
    for (const [name, property] of Object.entries(properties)) {
      const path = prefix ? `${prefix}.${name}` : name;
      if ((resolve(property) as { properties?: unknown }).properties) walk(property, path);
      const bound = describe(property, resolve);
      if (bound) limits.push({ location: 'body', name: path, bound });
    }
  };
  walk(op.requestBody?.content['application/json']?.schema as JsonSchema | undefined, '');
  return limits;
}

/** The spec's per-operation limits table, from the OpenAPI document (so it is what validation enforces). */
export function limitsTable(document: { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, unknown> } }, operationNames: ReadonlySet<string>): string {
  const rows: string[] = [];
  for (const item of Object.values(document.paths)) {
    for (const op of Object.values(item) as DocumentOperation[]) {
      if (!operationNames.has(op.operationId)) continue;
      const limits = inputLimits(op, document.components.schemas);
      if (limits.length === 0) continue;
      rows.push(`| \`${op.operationId}\` | ${limits.map((l) => `${l.location} \`${l.name}\`: ${l.bound}`).join('; ')} |`);
    }
  }
  return ['| operation | bounded inputs (past a bound: 400, naming the field) |', '|---|---|', ...rows].join('\n');
}
