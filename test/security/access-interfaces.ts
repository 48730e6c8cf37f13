import { getNamedType, type GraphQLField, isUnionType } from 'graphql';
import { buildGraphqlSchema, mutationFieldName, queryFieldName } from '../../src/adapters/graphql/schema.ts';
import { jsonSchemas } from '../../src/adapters/json-schema.ts';
import { loadConfig } from '../../src/config.ts';
import { type Operation, parameterLocation } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import { graphql } from '../graphql/client.ts';
import type { TestServer } from '../harness.ts';
import type { McpClient } from '../mcp/clients.ts';

export const INTERFACES = ['rest', 'mcp', 'graphql'] as const;
export type Interface = (typeof INTERFACES)[number];
export const INTERFACE_NAMES: Record<Interface, string> = { rest: 'REST', mcp: 'MCP', graphql: 'GraphQL' };

/** What an interface answered, as a class: the operation ran, was refused (with the problem's status and code), or waits for an approval. */
export type Observed =
  | { readonly kind: 'allowed' }
  | { readonly kind: 'approval' }
  | { readonly kind: 'refused'; readonly status: number; readonly code: string }
  /** Anything else (a protocol error, a 5xx): never in the table. */
  | { readonly kind: 'broken'; readonly detail: string };

/** A body is the pending approval a gated call made instead of running. */
function isApproval(operation: Operation, body: unknown): boolean {
  const approval = body as { id?: unknown; operation?: unknown; status?: unknown } | null;
  return typeof approval?.id === 'string' && approval.id.startsWith('apr_') && approval.operation === operation.name && approval.status === 'pending';
}

function refusal(problem: { status?: unknown; code?: unknown } | undefined, raw: string): Observed {
  if (typeof problem?.status !== 'number' || typeof problem.code !== 'string') return { kind: 'broken', detail: raw };
  if (problem.status >= 500) return { kind: 'broken', detail: raw };
  return { kind: 'refused', status: problem.status, code: problem.code };
}

/** Sends the operation over REST: path parameters into the path, the rest into the query or the body, as the operation places them. */
export async function viaRest(t: TestServer, operation: Operation, input: Record<string, unknown>, token: string): Promise<Observed> {
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  let path = operation.http.path;
  for (const [key, value] of Object.entries(input)) {
    const at = parameterLocation(operation, key);
    if (at === 'path') path = path.replace(`{${key}}`, encodeURIComponent(String(value)));
    else if (at === 'query') query.set(key, String(value));
    else body[key] = value;
  }
  const url = `/api/v1${path}${query.size > 0 ? `?${query}` : ''}`;
  if (operation.kind === 'stream') {
    // A stream never ends: take its head, then hang up.
    const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` }, payloadAsStream: true });
    if (res.statusCode === 200) {
      res.stream().destroy();
      return { kind: 'allowed' };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of res.stream()) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return refusal(JSON.parse(text) as { status?: number; code?: string }, text);
  }
  const method = operation.http.method;
  const res = await t.request(method, url, { token, ...(method === 'POST' || method === 'PATCH' ? { body } : {}) });
  if (res.status >= 200 && res.status < 300) return res.status === 202 && isApproval(operation, res.json()) ? { kind: 'approval' } : { kind: 'allowed' };
  return refusal(res.json(), `${res.status} ${res.body}`);
}

/** Calls the operation's tool with the input as its arguments (a write gets a fresh Idempotency-Key from the server). */
export async function viaMcp(client: McpClient, operation: Operation, input: Record<string, unknown>): Promise<Observed> {
  let result;
  try {
    result = await client.callTool(operation.name, input);
  } catch (error) {
    return { kind: 'broken', detail: String(error) };
  }
  if (result.isError) {
    const text = (result.content as { text?: string }[] | undefined)?.[0]?.text ?? '';
    try {
      return refusal(JSON.parse(text) as { status?: number; code?: string }, text);
    } catch {
      return { kind: 'broken', detail: text };
    }
  }
  return isApproval(operation, result.structuredContent) ? { kind: 'approval' } : { kind: 'allowed' };
}

const schema = buildGraphqlSchema(operations, jsonSchemas(loadConfig({})));

function fieldOf(operation: Operation): GraphQLField<unknown, unknown> {
  const root = operation.kind === 'read' ? schema.getQueryType() : schema.getMutationType();
  const field = root?.getFields()[operation.kind === 'read' ? queryFieldName(operation) : mutationFieldName(operation)];
  if (!field) throw new Error(`${operation.name} has no GraphQL field`);
  return field;
}

/** Sends the operation's field with the input as its arguments, selecting only the answer's type (REST's 202 is the Approval member). */
export async function viaGraphql(t: TestServer, operation: Operation, input: Record<string, unknown>, token: string): Promise<Observed> {
  const field = fieldOf(operation);
  const args = field.args.filter((a) => a.name in input);
  const unknown = Object.keys(input).filter((name) => !args.some((a) => a.name === name));
  if (unknown.length > 0) return { kind: 'broken', detail: `${field.name} takes no argument ${unknown.join(', ')}` };
  const declared = args.map((a) => `$${a.name}: ${String(a.type)}`).join(', ');
  const passed = args.map((a) => `${a.name}: $${a.name}`).join(', ');
  const kind = operation.kind === 'read' ? 'query' : 'mutation';
  const query = `${kind}${declared ? ` (${declared})` : ''} { answer: ${field.name}${passed ? `(${passed})` : ''} { __typename } }`;
  const res = await graphql<{ answer: { __typename: string } | null }>(t, query, { variables: input, token });
  const [error] = res.errors ?? [];
  if (error) return refusal(error.extensions, JSON.stringify(res.errors));
  const typename = res.data?.answer?.__typename;
  if (typename === undefined) return { kind: 'broken', detail: JSON.stringify(res) };
  // Only a gated write's answer is a union of what it ran and the Approval it made instead.
  return isUnionType(getNamedType(field.type)) && typename === 'Approval' ? { kind: 'approval' } : { kind: 'allowed' };
}
