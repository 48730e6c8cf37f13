import type { TestServer } from '../harness.ts';
import { asMcpClient, connectV1, connectV2, type McpClient } from '../mcp/clients.ts';

/** The scopes an agent that works tasks holds (spec/agent-guide.md). */
export const AGENT_SCOPES = ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read', 'artifacts:write'] as const;

/** A `next_actions` entry as served (spec/api.md, "next_actions"). */
export interface NextAction {
  operation: string;
  method: string;
  href: string;
  headers?: Record<string, string>;
  body?: Record<string, unknown>;
  /** Body members the caller writes before sending (a hand-in's `summary`, a change request's `comment`). */
  fill?: string[];
}

/**
 * The action with the members it asks the caller to `fill` written in, from `words` (each must be
 * given); an action without `fill` as it is.
 */
export function filled(action: NextAction, words: Record<string, string> = {}): NextAction {
  if (!action.fill) return action;
  const added = Object.fromEntries(action.fill.map((name) => {
    const word = words[name];
    if (word === undefined) throw new Error(`the ${action.operation} action asks for ${name}`);
    return [name, word];
  }));
  return { ...action, body: { ...action.body, ...added } };
}

/**
 * Sends a next action over REST exactly as written: method, href, headers (its own Idempotency-Key
 * included) and body. Answers the status and the body text.
 */
export async function sendAction(t: TestServer, token: string, action: NextAction): Promise<{ status: number; body: string }> {
  const res = await t.app.inject({
    method: action.method as 'POST',
    url: action.href,
    headers: { authorization: `Bearer ${token}`, ...action.headers, ...(action.body ? { 'content-type': 'application/json' } : {}) },
    ...(action.body ? { payload: JSON.stringify(action.body) } : {}),
  });
  return { status: res.statusCode, body: res.body };
}

/**
 * The MCP tool call a next action stands for, by the rule spec/mcp.md states: the tool named
 * `operation`; `id` is the id in `href`; the body's members are the other arguments; the
 * Idempotency-Key is `idempotency_key` and If-Match's number is `expected_version`.
 */
export function toolCall(action: NextAction): { name: string; arguments: Record<string, unknown> } {
  const args: Record<string, unknown> = { ...action.body };
  const id = /\/([a-z]{3}_[0-9A-Z]{26})(?:\/|$)/.exec(action.href)?.[1];
  if (id) args.id = id;
  const key = action.headers?.['Idempotency-Key'];
  if (key) args.idempotency_key = key;
  const ifMatch = action.headers?.['If-Match'];
  if (ifMatch) args.expected_version = Number(ifMatch.replaceAll('"', ''));
  return { name: action.operation, arguments: args };
}

/** The one action of `operation` among `actions`; throws when the response did not offer it. */
export function offered(actions: readonly NextAction[] | undefined, operation: string): NextAction {
  const action = actions?.find((a) => a.operation === operation);
  if (!action) throw new Error(`no ${operation} among next_actions: ${JSON.stringify(actions)}`);
  return action;
}

/** An MCP client of the given SDK generation: the 1.x `@modelcontextprotocol/sdk` client, or the v2 client on 2026-07-28. */
export async function mcpClient(baseUrl: string, token: string, sdk: '1.x' | 'v2'): Promise<McpClient> {
  if (sdk === 'v2') return asMcpClient(await connectV2(baseUrl, token, 'modern'));
  const v1 = await connectV1(baseUrl, token);
  return { callTool: (name, args) => v1.callTool({ name, arguments: args }), close: () => v1.close() };
}
