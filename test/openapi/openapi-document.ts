import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv';
import formats from 'ajv-formats';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNode } from '../cli/run-baton.ts';
import type { TestServer } from '../harness.ts';

/** The parts of an OpenAPI 3.1 document these tests read. */
export interface OpenApiDocument {
  openapi: string;
  servers?: { url: string }[];
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, unknown>; responses?: Record<string, OpenApiResponse>; parameters?: Record<string, OpenApiParameter> };
}

export interface OpenApiParameter {
  $ref?: string;
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  schema?: unknown;
}

export interface OpenApiResponse {
  $ref?: string;
  description: string;
  content?: Record<string, { schema?: unknown }>;
  headers?: Record<string, unknown>;
}

export interface OpenApiOperation {
  operationId: string;
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content: Record<string, { schema?: unknown }> };
  responses: Record<string, OpenApiResponse>;
}

/**
 * A parameter of an operation, a `#/components/parameters/…` reference followed, with the document
 * path of the parameter object it resolves to (for `schemaCompiler`).
 */
export function resolveParameter(document: OpenApiDocument, at: readonly string[], parameter: OpenApiParameter): { parameter: OpenApiParameter; path: string[] } {
  const name = parameter.$ref?.replace('#/components/parameters/', '');
  if (name === undefined) return { parameter, path: [...at] };
  const target = document.components.parameters?.[name];
  if (!target) throw new Error(`unresolved parameter ${parameter.$ref ?? ''}`);
  return { parameter: target, path: ['components', 'parameters', name] };
}

/**
 * A response of an operation, a `#/components/responses/…` reference followed, with the document
 * path of the response object it resolves to (for `schemaCompiler`).
 */
export function resolveResponse(document: OpenApiDocument, at: readonly string[], response: OpenApiResponse): { response: OpenApiResponse; path: string[] } {
  const name = response.$ref?.replace('#/components/responses/', '');
  if (name === undefined) return { response, path: [...at] };
  const target = document.components.responses?.[name];
  if (!target) throw new Error(`unresolved response reference ${String(response.$ref)}`);
  return { response: target, path: ['components', 'responses', name] };
}

/**
 * The document with every `#/components/schemas/…` reference replaced by the schema it names (a
 * sibling `description` kept), for readers that walk schemas without following references.
 */
export function withSchemasInlined<T extends OpenApiDocument>(document: T): T {
  const inline = (node: unknown, depth: number): unknown => {
    if (Array.isArray(node)) return node.map((item) => inline(item, depth));
    if (typeof node !== 'object' || node === null) return node;
    const { $ref, ...rest } = node as { $ref?: unknown };
    const name = typeof $ref === 'string' && $ref.startsWith('#/components/schemas/') ? $ref.slice('#/components/schemas/'.length) : undefined;
    const own = Object.fromEntries(Object.entries(name === undefined ? node : rest).map(([k, v]) => [k, inline(v, depth)]));
    if (name === undefined) return own;
    if (depth > 20) throw new Error(`a reference cycle through ${name}`);
    return { ...(inline(document.components.schemas[name], depth + 1) as object), ...own };
  };
  return { ...document, paths: inline(document.paths, 0) as T['paths'] };
}

/** GET /api/v1/openapi.json, as the server serves it. */
export async function fetchDocument(t: TestServer): Promise<OpenApiDocument> {
  const res = await t.request('GET', '/api/v1/openapi.json', { token: null });
  if (res.status !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.status}: ${res.body}`);
  return res.json<OpenApiDocument>();
}

// ajv-formats is CommonJS typed as an ES module: under nodenext its default import is the module, whose `default` is the plugin.
const addFormats = formats.default;

const DOCUMENT_ID = 'https://baton.test/openapi.json';

/** One JSON pointer token, escaped (RFC 6901) and made safe for a URI fragment. */
function pointerToken(token: string): string {
  return encodeURIComponent(token.replaceAll('~', '~0').replaceAll('/', '~1'));
}

/**
 * Compiles schemas found inside the document with Ajv's JSON Schema 2020-12 dialect (OpenAPI 3.1's
 * default), strict, with formats; `#/components/schemas/…` refs resolve against the document.
 */
export function schemaCompiler(document: OpenApiDocument): (path: readonly string[]) => ValidateFunction {
  // strictRequired off: a view requires members its base declares (`Task`: `allOf` TaskFields, more
  // of them `required`), which Ajv's lint cannot see through the `$ref`.
  const ajv = new Ajv2020({ strict: true, strictRequired: false, allErrors: true });
  addFormats(ajv);
  // The document's own members are not JSON Schema keywords; refs point into them by JSON pointer.
  ajv.addVocabulary(['openapi', 'info', 'jsonSchemaDialect', 'servers', 'security', 'tags', 'externalDocs', 'paths', 'webhooks', 'components']);
  ajv.addSchema(structuredClone(document), DOCUMENT_ID);
  const cache = new Map<string, ValidateFunction>();
  return (path) => {
    const ref = `${DOCUMENT_ID}#/${path.map(pointerToken).join('/')}`;
    let validate = cache.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: ref });
      cache.set(ref, validate);
    }
    return validate;
  };
}

/**
 * The path template of the document that a concrete path matches, for this method. Literal
 * segments win over parameters (`/tasks/claim` before `/tasks/{id}`).
 */
export function matchTemplate(document: OpenApiDocument, method: string, path: string): string | undefined {
  const templates = Object.keys(document.paths)
    .filter((template) => document.paths[template]?.[method.toLowerCase()] !== undefined)
    .sort((a, b) => (a.match(/\{/g)?.length ?? 0) - (b.match(/\{/g)?.length ?? 0));
  return templates.find((template) => {
    const pattern = template.split(/\{\w+\}/).map((part) => part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('[^/]+');
    return new RegExp(`^${pattern}$`).test(path);
  });
}

/** Redocly CLI's lint of a document (recommended rules, redocly.yaml): its problems as `rule: message`, its totals and exit code. */
export async function redoclyLint(document: OpenApiDocument): Promise<{ problems: string[]; totals: { errors: number; warnings: number }; code: number | null }> {
  const redocly = fileURLToPath(new URL('../../node_modules/@redocly/cli/bin/cli.js', import.meta.url));
  const config = fileURLToPath(new URL('../../redocly.yaml', import.meta.url));
  const scratch = fileURLToPath(new URL('../../scratch/', import.meta.url));
  await mkdir(scratch, { recursive: true });
  const dir = await mkdtemp(join(scratch, 'redocly-'));
  try {
    const file = join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const { code, stdout } = await startNode([redocly, 'lint', file, '--config', config, '--format', 'json'], { REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' }).outcome;
    const report = JSON.parse(stdout) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; message: string }[] };
    return { problems: report.problems.map((p) => `${p.ruleId}: ${p.message}`), totals: report.totals, code };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
