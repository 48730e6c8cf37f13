/**
 * Generates src/client/operations.ts from the operation registry: every operation's route (method,
 * path, query members of a write, where it sits on the client) and its input and output types,
 * written from the same Zod schemas the server validates with, through `z.toJSONSchema`. The client
 * (src/client/, and the package packages/client/build.ts compiles from it) imports nothing else of
 * the server, so it runs in browsers and typechecks without the server's sources.
 *
 * `node scripts/generate-client.ts` rewrites the file; the client's build runs it, and
 * test/lint/client-operations.test.ts fails while the checked-in file differs from what it writes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { ERROR_CODES, problemSchema } from '../src/errors.ts';
import { operationParts } from '../src/operations/define-operation.ts';
import { operations } from '../src/operations/index.ts';

/** The generated file, checked in beside the client modules that import it. */
export const GENERATED = fileURLToPath(new URL('../src/client/operations.ts', import.meta.url));

type Operation = (typeof operations)[number];
type Schema = boolean | { [key: string]: unknown };

/** A JSON Schema (as z.toJSONSchema writes it) as a TypeScript type. */
function typeOf(schema: Schema, indent: string): string {
  if (typeof schema === 'boolean') return schema ? 'unknown' : 'never';
  const anyOf = (schema.anyOf ?? schema.oneOf) as Schema[] | undefined;
  if (anyOf) return anyOf.map((s) => typeOf(s, indent)).join(' | ');
  const allOf = schema.allOf as Schema[] | undefined;
  if (allOf) return allOf.map((s) => typeOf(s, indent)).join(' & ');
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in schema) return JSON.stringify(schema.const);
  if (Array.isArray(schema.type)) return schema.type.map((type: unknown) => typeOf({ ...schema, type }, indent)).join(' | ');
  switch (schema.type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (Array.isArray(schema.prefixItems)) return `[${(schema.prefixItems as Schema[]).map((s) => typeOf(s, indent)).join(', ')}]`;
      const items = typeOf((schema.items ?? true) as Schema, indent);
      return /^[\w"]+$/.test(items) ? `${items}[]` : `Array<${items}>`;
    }
    case 'object':
      return objectType(schema, indent);
    case undefined:
      if ('$ref' in schema) throw new Error(`a $ref (${String(schema.$ref)}) in an operation's JSON Schema: inline it, or teach scripts/generate-client.ts to name it`);
      return 'unknown';
    default:
      return 'unknown';
  }
}

function objectType(schema: { [key: string]: unknown }, indent: string): string {
  const properties = Object.entries((schema.properties ?? {}) as Record<string, Schema>);
  const required = new Set((schema.required ?? []) as string[]);
  const extra = schema.additionalProperties as Schema | undefined;
  const inner = `${indent}  `;
  const members = properties.map(([key, value]) => {
    const doc = typeof value === 'object' && typeof value.description === 'string' ? `${inner}/** ${comment(value.description)} */\n` : '';
    const name = /^[A-Za-z_$][\w$]*$/.test(key) ? key : JSON.stringify(key);
    return `${doc}${inner}${name}${required.has(key) ? '' : '?'}: ${typeOf(value, inner)};\n`;
  });
  const record = extra === undefined || extra === true ? 'unknown' : extra === false ? undefined : typeOf(extra, indent);
  if (members.length === 0) return record === undefined ? 'Record<string, never>' : `Record<string, ${record}>`;
  const shape = `{\n${members.join('')}${indent}}`;
  return record === undefined ? shape : `${shape} & Record<string, ${record === 'unknown' ? 'unknown' : `${record} | undefined`}>`;
}

/** A string literal as the client's sources write one. */
const quote = (text: string) => `'${text.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
const comment = (text: string) => text.replaceAll('*/', '*\\/').replace(/\s*\n\s*/g, ' ');
const toSchema = (schema: z.ZodType, io: 'input' | 'output') => z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Schema;
const camel = (name: string) => name.replace(/_(\w)/g, (_, c: string) => c.toUpperCase());

/** Where an operation sits on the client: `tasks_claim_next` is tasks.claimNext, `whoami` whoami; a stream's `stream` is `follow`. */
function placeOf(op: Operation): [string] | [string, string] {
  const [resource, verb] = operationParts(op.name);
  if (verb === undefined) return [resource];
  const name = camel(verb);
  return [resource, op.kind === 'stream' && name === 'stream' ? 'follow' : name];
}

/** Members of the client object that are not operations (src/client/index.ts adds them). */
const RESERVED = new Set(['call', 'exports.download']);

/** The text of src/client/operations.ts for the registry as it is. */
export function generateClientModule(): string {
  const places = new Map<string, string>();
  for (const op of operations) {
    const place = placeOf(op).join('.');
    const taken = places.get(place) ?? (RESERVED.has(place) ? 'the client itself' : undefined);
    if (taken) throw new Error(`${op.name} would sit at client.${place}, where ${taken} is`);
    places.set(place, op.name);
  }
  const out = [
    '// Generated by scripts/generate-client.ts from the operation registry (src/operations/index.ts). Do not edit:',
    '// run `node scripts/generate-client.ts` (test/lint/client-operations.test.ts fails while this file is stale).',
    "import type { Follow, Route } from './index.ts';",
    '',
    '/** Every error code a problem document may carry. */',
    `export type ErrorCode = ${ERROR_CODES.map((code) => JSON.stringify(code)).join(' | ')};`,
    '',
    '/** A problem document (RFC 9457) as Baton serves it. */',
    `export type ProblemDocument = ${typeOf(toSchema(problemSchema, 'output'), '')};`,
    '',
    '/** Every operation of the registry: its input (as a caller writes it, before defaults) and its output. */',
    'export interface Operations {',
  ];
  for (const op of operations) {
    out.push(`  /** ${comment(op.summary)} */`);
    out.push(`  ${op.name}: {\n    input: ${typeOf(toSchema(op.input, 'input'), '    ')};\n    output: ${typeOf(toSchema(op.output, 'output'), '    ')};\n  };`);
  }
  out.push('}', '');
  const streams = operations.filter((op) => op.kind === 'stream').map((op) => JSON.stringify(op.name));
  out.push('/** The operations answered as a stream of Server-Sent Events (their method is `follow`). */', `export type StreamName = ${streams.join(' | ') || 'never'};`, '');
  const groups = new Map<string, string[]>();
  const top: string[] = [];
  for (const op of operations) {
    const [group, name] = placeOf(op);
    const doc = `/** ${comment(op.summary)} (${op.http.method} ${op.http.path}) */`;
    const type = `${op.kind === 'stream' ? 'Follow' : 'Route'}<${JSON.stringify(op.name)}>`;
    if (name === undefined) top.push(`  ${doc}\n  ${group}: ${type};`);
    else groups.set(group, [...(groups.get(group) ?? []), `    ${doc}\n    ${name}: ${type};`]);
  }
  out.push('/** One method per operation, grouped by resource. */', 'export interface OperationRoutes {', ...top);
  for (const [group, members] of groups) out.push(`  ${group}: {\n${members.join('\n')}\n  };`);
  out.push('}', '');
  out.push(
    "/** Each operation's route, and where it sits on the client. */",
    'export interface RouteOf {',
    '  readonly name: keyof Operations;',
    '  readonly at: readonly [string] | readonly [string, string];',
    "  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';",
    '  readonly path: string;',
    '  /** Members of a write\'s input sent in the query string instead of the body. */',
    '  readonly query: readonly string[];',
    '  readonly stream: boolean;',
    '}',
    '',
    'export const ROUTES: readonly RouteOf[] = [',
  );
  for (const op of operations) {
    const list = (items: readonly string[]) => `[${items.map(quote).join(', ')}]`;
    out.push(`  { name: ${quote(op.name)}, at: ${list(placeOf(op))}, method: ${quote(op.http.method)}, path: ${quote(op.http.path)}, query: ${list(op.http.query ?? [])}, stream: ${op.kind === 'stream'} },`);
  }
  out.push('];', '');
  return out.join('\n');
}

/** Rewrites the generated file when the registry changed it; says whether it did. */
export function writeClientModule(): boolean {
  const text = generateClientModule();
  let current: string | undefined;
  try {
    current = readFileSync(GENERATED, 'utf8');
  } catch {
    current = undefined;
  }
  if (current === text) return false;
  writeFileSync(GENERATED, text);
  return true;
}

if (import.meta.main) {
  process.stdout.write(writeClientModule() ? `wrote ${GENERATED}\n` : `${GENERATED} is up to date\n`);
}
