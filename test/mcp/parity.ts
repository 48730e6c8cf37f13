import { isCallable, type Operation } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import type { TestServer } from '../harness.ts';
import { type Fixtures, makeFixtures, type OperationRequest, operationRequests, sendOperation } from '../security/operation-requests.ts';
import type { McpClient, ToolResult } from './clients.ts';

/** One interface's answer to one operation: success or failure, and the JSON it carried. */
export interface Answer {
  readonly ok: boolean;
  readonly body: unknown;
}

export interface Disagreement {
  readonly operation: string;
  readonly rest: Answer;
  readonly mcp: Answer;
}

/** The MCP form of a REST request: path parameters, query and body become one arguments object. */
export function toolArguments(request: OperationRequest): Record<string, unknown> {
  return { ...request.params, ...Object.fromEntries(new URLSearchParams(request.query ?? '')), ...request.body };
}

/** A tool result as an answer: the structured output, or the problem document of an error. */
export function mcpAnswer(result: ToolResult): Answer {
  if (!result.isError) return { ok: true, body: result.structuredContent };
  const [first] = result.content as { text: string }[];
  return { ok: false, body: JSON.parse(first?.text ?? 'null') };
}

/**
 * Walks the registry: every operation once over REST and once over MCP, as the same caller, each on
 * its own copy of the fixtures (made alike, so a write on one side leaves both sides in step). Reads
 * and writes are interleaved in registry order, so each pair sees the same state. Returns the
 * operations whose answers differ beyond ids, timestamps, secrets and keys.
 */
export async function walkParity(t: TestServer, mcp: McpClient, token: string): Promise<Disagreement[]> {
  const rest: Fixtures = await makeFixtures(t);
  const other: Fixtures = await makeFixtures(t);
  const disagreements: Disagreement[] = [];
  for (const operation of operations.filter(isCallable)) {
    const build = operationRequests[operation.name];
    if (!build) throw new Error(`${operation.name} has no request in test/security/operation-requests.ts`);
    const restAnswer = await viaRest(t, operation, build(rest), token);
    const mcpAnswer_ = mcpAnswer(await mcp.callTool(operation.name, toolArguments(build(other))));
    if (normalized(restAnswer) !== normalized(mcpAnswer_)) disagreements.push({ operation: operation.name, rest: restAnswer, mcp: mcpAnswer_ });
  }
  return disagreements;
}

async function viaRest(t: TestServer, operation: Operation, request: OperationRequest, token: string): Promise<Answer> {
  const res = await sendOperation(t, operation, request, token);
  return { ok: res.status < 400, body: res.json() };
}

/**
 * The answer as JSON with what legitimately differs between two calls replaced by placeholders,
 * and a problem's wording for its interface (its hint; the HTTP location of a field) left out.
 */
export function normalized(answer: Answer): string {
  return JSON.stringify(answer)
    .replace(/"hint":"(?:[^"\\]|\\.)*"/g, '"hint":"*"')
    .replace(/,"location":"(?:path|query|body)"/g, '')
    .replace(/\b([a-z]{2,3})_[0-9A-HJKMNP-TV-Z]{26}\b/g, '$1_*')
    .replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z/g, '<time>')
    .replace(/\bbat_[0-9A-Za-z]+/g, 'bat_*')
    .replace(/\bwhsec_[0-9A-Za-z+/=]+/g, 'whsec_*')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>')
    .replace(/"machine":"m-[0-9a-f]{8}"/g, '"machine":"m-*"')
    .replace(/"(remaining|reset_s)":\d+/g, '"$1":0')
    .replace(/"(next_cursor|sync_cursor)":"[^"]*"/g, '"$1":"*"')
    .replace(/"Idempotency-Key":"[^"]*"/g, '"Idempotency-Key":"*"');
}
