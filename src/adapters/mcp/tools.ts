import { randomUUID } from 'node:crypto';
import type { CallToolResult, Tool } from '@modelcontextprotocol/server';
import { BatonError, toBatonError, toProblem } from '../../errors.ts';
import { approvalOutput } from '../../operations/approvals/approval-schema.ts';
import { mayInvoke } from '../../operations/authorization.ts';
import { type CallableOperation, isCallable, type Operation, takesExpectedVersion, type Toolset } from '../../operations/define-operation.ts';
import type { Authenticated } from '../../service/authenticate.ts';
import type { Call } from '../../service/execute.ts';
import type { Service } from '../../service/service.ts';
import { ULID } from '../../ids.ts';
import type { JsonSchema, JsonSchemas } from '../json-schema.ts';
import { asV2Schema } from '../v2-schema.ts';
import type { ApiVersion } from '../../domain/api-version.ts';
import { MCP_DIALECT } from './dialect.ts';
import { type SchemaMode, strictSchema } from './strict-schema.ts';
import { toolsetOf } from './toolsets.ts';

/** `_meta` keys of a tool result (MCP reserves unprefixed names, so ours carry `baton/`). */
const META = {
  idempotencyKey: 'baton/idempotency_key',
  replayed: 'baton/replayed',
  allowed: 'baton/allowed',
  needsApproval: 'baton/needs_approval',
} as const;

/** `_meta` key of a result that elicited asks first: what became of each (spec/mcp.md § Elicitation). */
export const ELICITED_META = 'baton/elicited';

const IDEMPOTENCY_KEY = 'idempotency_key';
const EXPECTED_VERSION = 'expected_version';

/** A tool as listed, before the caller-specific parts (allowed, needs approval) are added. */
export interface ToolShape {
  readonly operation: CallableOperation;
  readonly tool: Tool;
  /** The input schema as strict hosts take it (`?schemas=strict`). */
  readonly strictInput: Tool['inputSchema'];
  /** The output schema of v2's answers (`?api=v2`). */
  readonly outputV2: Tool['outputSchema'];
}

/** What a caller's tools/list holds: the tool sets, and whether output schemas are included. */
export interface ToolListing {
  readonly toolsets: ReadonlySet<Toolset>;
  /**
   * Output schemas are three quarters of a listing and hosts do not show them to the model, so they
   * are listed only on request (`?output_schemas=1`); the OpenAPI document has them all.
   */
  readonly outputSchemas: boolean;
  /** `strict` (`?schemas=strict`): input schemas that OpenAI's and Anthropic's strict modes accept. */
  readonly schemas: SchemaMode;
  /** The REST version whose answers the tools give (`?api=v2`: v2's leaner tasks; spec/api.md, "Versions"). */
  readonly apiVersion: ApiVersion;
}

/**
 * One MCP tool per registry operation that answers once (streams are not tools): name, description, input and output JSON Schemas derived
 * from the Zod schemas, and annotations from the operation's kind and approval class. Computed once.
 */
export function deriveTools(operations: readonly Operation[], schemas: JsonSchemas): ReadonlyMap<string, ToolShape> {
  return new Map(
    operations.filter(isCallable).map((operation) => {
      const tool = toolOf(operation, schemas);
      return [operation.name, { operation, tool, strictInput: strictSchema(tool.inputSchema) as Tool['inputSchema'], outputV2: asV2Schema(tool.outputSchema, schemas) }];
    }),
  );
}

function toolOf(operation: Operation, schemas: JsonSchemas): Tool {
  const input = schemas.input(operation.input) as JsonSchema & { properties?: Record<string, JsonSchema> };
  const properties: Record<string, JsonSchema> = { ...input.properties };
  // Described once, in the server's instructions, not in each of some thirty write tools.
  if (operation.kind === 'write') properties[IDEMPOTENCY_KEY] = { type: 'string' };
  if (takesExpectedVersion(operation)) properties[EXPECTED_VERSION] = { type: 'integer', minimum: 1 };
  const output = schemas.output(operation.output);
  const listedInput = leanSchema({ ...input, type: 'object', properties: leanProperties(properties) });
  // No `title`: it would repeat the summary the description opens with, in every listing.
  return {
    name: operation.name,
    description: operation.description ? `${operation.summary} ${operation.description}` : operation.summary,
    inputSchema: listedInput as Tool['inputSchema'],
    // A gated operation answers with a pending approval instead of its output unless the caller decides approvals.
    outputSchema: (operation.approval === 'none' ? { ...output, type: 'object' } : { type: 'object', anyOf: [output, schemas.output(approvalOutput)] }),
    annotations: annotationsOf(operation),
  };
}

/** Keywords a listing leaves out: length and count bounds, which the server checks and reports with a hint (spec/mcp.md, "Tool sets and budgets"). */
const UNLISTED_KEYWORDS = new Set(['minLength', 'maxLength', 'minItems', 'maxItems']);

/**
 * An input schema as listed: what the server checks, less what tells a model little. An id's
 * pattern names 26 base32 characters rather than the ULID's exact alphabet; JavaScript's
 * safe-integer bounds (what an unbounded integer gets), length and count bounds, and the member
 * names a `fields` list may hold (the full view shows them) are left out. The server checks all of
 * them exactly, and every byte here is spent in every agent's context (spec/mcp.md, "Tool sets and budgets").
 */
function leanSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(leanSchema);
  if (typeof schema !== 'object' || schema === null) return schema;
  const lean: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (UNLISTED_KEYWORDS.has(key) || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) || (key === 'minimum' && value === Number.MIN_SAFE_INTEGER)) continue;
    if (key === 'pattern' && typeof value === 'string') lean[key] = value.replaceAll(ULID, '[0-9A-Z]{26}');
    else lean[key] = leanSchema(value);
  }
  return lean;
}

/** The `fields` member of a read, listed as a list of names without their enumeration. */
function leanProperties(properties: Record<string, JsonSchema>): Record<string, JsonSchema> {
  const fields = properties['fields'];
  return fields?.type === 'array' ? { ...properties, fields: { ...fields, items: { type: 'string' } } } : properties;
}

/**
 * The hints that differ from MCP's defaults (`readOnlyHint` false, `destructiveHint` true,
 * `idempotentHint` false, `openWorldHint` true), which a host assumes for an absent one; the
 * destructive and idempotent hints say nothing about a read. The same facts as all four, in half
 * the bytes of every listing (spec/mcp.md, "Tools").
 */
function annotationsOf(operation: Operation): Tool['annotations'] {
  const outward = operation.approval === 'outward';
  if (operation.kind === 'read') return { readOnlyHint: true, ...(outward ? {} : { openWorldHint: false }) };
  const destructive = operation.approval === 'destructive' || operation.http.method === 'DELETE';
  return { ...(destructive ? {} : { destructiveHint: false }), ...(outward ? {} : { openWorldHint: false }) };
}

/**
 * The tools as this caller sees them: every tool of the selected sets that the caller could ever
 * call (a human-only operation is not listed to an agent), each disallowed one saying so (a tool
 * outside the token's scopes or allowlist is listed, not hidden). `_meta` is there only when it
 * says something: absent means allowed, with no approval to wait for.
 */
export function listToolsFor(tools: ReadonlyMap<string, ToolShape>, caller: Authenticated, listing: ToolListing): Tool[] {
  const { principal } = caller;
  const decidesApprovals = principal.kind === 'human' && principal.scopes.has('approvals:decide');
  const listed = [...tools.values()].filter(({ operation }) => listing.toolsets.has(toolsetOf(operation)) && !(operation.humanOnly === true && principal.kind !== 'human'));
  return listed.map(({ operation, strictInput, outputV2, tool: { outputSchema, ...tool } }) => {
    const allowed = mayInvoke(principal, operation);
    const needsApproval = allowed && operation.approval !== 'none' && !decidesApprovals;
    const refusal = allowed ? '' : ` You may not call this: it needs scope ${operation.scope ?? 'none'} and a place in your toolAllowlist.`;
    return {
      ...tool,
      ...(listing.schemas === 'strict' ? { inputSchema: strictInput } : {}),
      ...(listing.outputSchemas ? { outputSchema: listing.apiVersion === 2 ? outputV2 : outputSchema } : {}),
      description: `${tool.description ?? ''}${refusal}`,
      ...(allowed && !needsApproval ? {} : { _meta: { [META.allowed]: allowed, [META.needsApproval]: needsApproval } }),
    };
  });
}

/**
 * Runs one tool call through the service layer, as REST does: the same executor, scopes, allowlist,
 * approvals and idempotency. A failure is a tool result with `isError` and the problem document.
 */
export async function callTool(service: Service, shape: ToolShape, args: Record<string, unknown>, caller: Authenticated & { requestId: string; listing?: Pick<ToolListing, 'apiVersion'> }): Promise<CallToolResult> {
  const { operation } = shape;
  let meta: Record<string, unknown> = {};
  try {
    const { input, idempotencyKey, expectedVersion } = splitArguments(operation, args);
    if (idempotencyKey !== undefined) meta = { [META.idempotencyKey]: idempotencyKey };
    const outcome = await service.execute(operation, input, mcpCall(caller, { idempotencyKey, expectedVersion }));
    if (idempotencyKey !== undefined) meta[META.replayed] = outcome.replayed;
    if (!outcome.ok) return errorResult(outcome.body, meta);
    return {
      content: [{ type: 'text', text: resultLine(operation, outcome.body.length, idempotencyKey) }],
      structuredContent: JSON.parse(outcome.body) as Record<string, unknown>,
      _meta: meta,
    };
  } catch (error) {
    return problemResult(toBatonError(error), service.baseUrl, caller.requestId, meta);
  }
}

/** The service call of one MCP request's caller, as REST makes it (scopes, rate budget, approvals), its problems worded for MCP, its answers in the version it asked for. */
export function mcpCall(caller: Authenticated & { requestId: string; listing?: Pick<ToolListing, 'apiVersion'> }, write: { idempotencyKey?: string | undefined; expectedVersion?: number | undefined } = {}): Call {
  return {
    principal: caller.principal,
    idempotencyKey: write.idempotencyKey,
    expectedVersion: write.expectedVersion,
    requestId: caller.requestId,
    budget: caller.budget,
    dialect: MCP_DIALECT,
    apiVersion: caller.listing?.apiVersion ?? 1,
  };
}

/** The output schema a caller's results match: its version's. */
export function outputSchemaFor(shape: ToolShape, listing: Pick<ToolListing, 'apiVersion'>): Tool['outputSchema'] {
  return listing.apiVersion === 2 ? shape.outputV2 : shape.tool.outputSchema;
}

/**
 * Takes the write-safety arguments out of a call (they are the MCP form of REST's Idempotency-Key
 * and If-Match headers); a write without a key gets a fresh one. Anything else is the operation's input.
 */
function splitArguments(operation: Operation, args: Record<string, unknown>) {
  if (operation.kind === 'read') return { input: args, idempotencyKey: undefined, expectedVersion: undefined };
  const { [IDEMPOTENCY_KEY]: key, [EXPECTED_VERSION]: expected, ...input } = args;
  if (key !== undefined && typeof key !== 'string') throw badArgument(IDEMPOTENCY_KEY, 'must be a string of 1 to 255 characters');
  if (!takesExpectedVersion(operation)) {
    return { input: expected === undefined ? input : { ...input, [EXPECTED_VERSION]: expected }, idempotencyKey: key ?? randomUUID(), expectedVersion: undefined };
  }
  if (expected !== undefined && !(Number.isInteger(expected) && (expected as number) >= 1)) throw badArgument(EXPECTED_VERSION, 'must be a positive integer');
  return { input, idempotencyKey: key ?? randomUUID(), expectedVersion: expected as number | undefined };
}

function badArgument(name: string, detail: string): BatonError {
  return new BatonError('validation_failed', `${name} ${detail}.`, { extra: { errors: [{ pointer: `/${name}`, detail, location: 'body' }] } });
}

/** The one translation of a `BatonError` into an MCP tool error, carrying the same problem document REST sends. */
export function problemResult(error: BatonError, baseUrl: string, requestId: string, meta: Record<string, unknown> = {}): CallToolResult {
  const problem = toProblem(error, baseUrl, MCP_DIALECT);
  if (problem.status >= 500) problem.request_id = requestId;
  return errorResult(JSON.stringify(problem), meta);
}

/**
 * The problem travels as the JSON text of the first content block. It is not `structuredContent`:
 * that must match the tool's outputSchema, and 1.x clients reject an error result whose does not.
 */
function errorResult(problemJson: string, meta: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: problemJson }], isError: true, _meta: meta };
}

/**
 * The one text line of a successful result: the JSON travels once, as `structuredContent` (MCP
 * 2025-06-18 onwards; SEP-2200 makes `content` the short, model-facing rendering). It names the
 * write's key, so a model that reads only text can still retry safely.
 */
function resultLine(operation: Operation, bytes: number, key: string | undefined): string {
  const retry = key === undefined ? '' : ` idempotency_key: ${key}`;
  return `${operation.name} succeeded: ${bytes} bytes of JSON in structuredContent.${retry}`;
}
