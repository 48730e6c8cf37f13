import { type CallToolResult, type ClientCapabilities, type McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isId } from '../../ids.ts';
import { followableOf } from '../../operations/define-operation.ts';
import { type Approval, approvalId } from '../../operations/approvals/approval-schema.ts';
import { getApproval } from '../../operations/approvals/get-approval.ts';
import type { Authenticated } from '../../service/authenticate.ts';
import type { McpTaskEnd, McpTaskRow } from '../../service/mcp-tasks.ts';
import type { Service } from '../../service/service.ts';
import { callTool, mcpCall, type ToolShape } from './tools.ts';

/** The MCP Tasks extension (2026-07-28 revision), as a host declares it per request and the server in `server/discover`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a host is asked to poll: each `tasks/get` of a wait looks for its answer once; an approval waits for a person. */
const POLL_INTERVAL_MS = { wait: 2_000, approval: 5_000 } as const;

type Caller = Authenticated & { readonly requestId: string };

/** The extension's `Task`, as a handle and `tasks/get` carry it (with the result or error of an ended one). */
type TaskWire = {
  taskId: string;
  status: McpTaskRow['status'];
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs: number;
  result?: Record<string, unknown>;
  error?: Record<string, unknown>;
};

/** Whether this request's host declared the Tasks extension (a 2026-07-28 per-request capability). */
export function takesTasks(capabilities: ClientCapabilities | undefined): boolean {
  return capabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/**
 * Runs a tool call for a host that takes tasks (spec/mcp.md, "MCP Tasks"). A read that would wait
 * (`followable`) looks once without waiting; if nothing has come, the answer is a task handle
 * instead of a held request. A gated write that answers with a pending approval answers a handle
 * that follows the approval to the operation's own result. Anything else answers as it would.
 */
export async function callOrFollow(service: Service, shape: ToolShape, args: Record<string, unknown>, caller: Caller): Promise<CallToolResult | TaskWire> {
  const { operation } = shape;
  const follow = followableOf(operation);
  const parsed = follow ? operation.input.safeParse(args) : undefined;
  if (follow && parsed?.success && Number(parsed.data[follow.seconds]) > 0) {
    const waitS = Number(parsed.data[follow.seconds]);
    const look = { ...parsed.data, [follow.seconds]: 0 };
    const first = await callTool(service, shape, look, caller);
    if (first.isError === true || follow.settles(first.structuredContent)) return first;
    const input = follow.resume ? follow.resume(look, first.structuredContent) : look;
    return wireOf(await service.mcpTasks.create(caller.principal, { tool: operation.name, input, follows: 'wait', waitS }));
  }
  const result = await callTool(service, shape, args, caller);
  const pending = operation.approval === 'none' ? undefined : pendingApproval(result);
  if (pending === undefined) return result;
  return wireOf(await service.mcpTasks.create(caller.principal, { tool: operation.name, input: { id: pending }, follows: 'approval' }));
}

/** The id of the pending approval a gated write answered with instead of running, if it did. */
function pendingApproval(result: CallToolResult): string | undefined {
  const output = (result.structuredContent ?? {}) as Record<string, unknown>;
  const id = output['id'];
  return result.isError !== true && typeof id === 'string' && isId('apr', id) && output['status'] === 'pending' ? id : undefined;
}

/** `tasks/get`, `tasks/update` and `tasks/cancel` for one caller, on a per-request server. */
export function registerTaskMethods(mcp: McpServer, service: Service, tools: ReadonlyMap<string, ToolShape>, caller: Caller): void {
  const byId = z.object({ taskId: z.string() }).loose();
  mcp.server.setRequestHandler('tasks/get', { params: byId }, async ({ taskId }) => ({ ...(await poll(service, tools, caller, taskId)) }));
  // Baton's tasks never ask their host for input, so no response is ever outstanding (the extension says to ignore such).
  mcp.server.setRequestHandler('tasks/update', { params: byId }, async ({ taskId }) => {
    if (!(await service.mcpTasks.find(caller.principal, taskId))) throw unknownTask(taskId);
    return {};
  });
  mcp.server.setRequestHandler('tasks/cancel', { params: byId }, async ({ taskId }) => {
    if (!(await service.mcpTasks.end(caller.principal, taskId, { status: 'cancelled', result: null }))) throw unknownTask(taskId);
    return {};
  });
}

/**
 * One `tasks/get`: an ended task as it ended; a working one looks once, as the caller, at what it
 * waits for, and ends if that has come (or its wait is over). Nothing runs between two polls, so
 * any instance answers any poll.
 */
async function poll(service: Service, tools: ReadonlyMap<string, ToolShape>, caller: Caller, taskId: string): Promise<TaskWire> {
  const row = await service.mcpTasks.find(caller.principal, taskId);
  if (!row) throw unknownTask(taskId);
  if (row.status !== 'working') return wireOf(row);
  const end = await look(service, tools, caller, row);
  if (!end) return wireOf(row);
  return wireOf((await service.mcpTasks.end(caller.principal, taskId, end)) ?? row);
}

async function look(service: Service, tools: ReadonlyMap<string, ToolShape>, caller: Caller, row: McpTaskRow): Promise<McpTaskEnd | undefined> {
  const shape = tools.get(row.tool);
  if (!shape) return { status: 'failed', result: { code: ProtocolErrorCode.InvalidParams, message: `Tool ${row.tool} no longer exists on this server.` } };
  if (row.follows === 'approval') return lookAtApproval(service, caller, String(row.input['id']));
  const result = await callTool(service, shape, row.input, caller);
  const follow = followableOf(shape.operation);
  const over = row.wait_until !== null && row.wait_until <= service.clock.now();
  return result.isError === true || over || follow?.settles(result.structuredContent) === true ? { status: 'completed', result } : undefined;
}

/**
 * An approval still pending leaves the task working. Once decided, the task completes with what the
 * call would have answered had it run at once (the operation's output, or its problem); denied or
 * expired, with the approval itself, which the tool's output schema also allows.
 */
async function lookAtApproval(service: Service, caller: Caller, id: string): Promise<McpTaskEnd | undefined> {
  const outcome = await service.execute(getApproval, { id: approvalId.parse(id) }, mcpCall(caller));
  // Not readable any more (the caller lost its scope, say): the task completes with that problem, as a tool call would.
  if (!outcome.ok) return { status: 'completed', result: { content: [{ type: 'text', text: outcome.body }], isError: true } };
  const approval = JSON.parse(outcome.body) as Approval;
  if (approval.status === 'pending') return undefined;
  const ran = approval.result;
  if (!ran) return { status: 'completed', result: structured(approval, `The approval was ${approval.status}; the operation did not run.`) };
  const output = ran.body as Record<string, unknown>;
  if (ran.status >= 400) return { status: 'completed', result: { content: [{ type: 'text', text: JSON.stringify(output) }], isError: true } };
  return { status: 'completed', result: structured(output, `${approval.operation} ran on approval: ${JSON.stringify(output).length} bytes of JSON in structuredContent.`) };
}

function structured(output: object, line: string): CallToolResult {
  return { content: [{ type: 'text', text: line }], structuredContent: output };
}

/** The extension's task shape of a row: a completed task carries its tool result, a failed one its JSON-RPC error. */
function wireOf(row: McpTaskRow): TaskWire {
  const task: TaskWire = {
    taskId: row.id,
    status: row.status,
    createdAt: row.created_at.toISOString(),
    lastUpdatedAt: row.updated_at.toISOString(),
    ttlMs: row.expires_at.getTime() - row.created_at.getTime(),
    pollIntervalMs: POLL_INTERVAL_MS[row.follows],
  };
  // The tool result as the 2026-07-28 revision carries it, `resultType` and all.
  if (row.status === 'completed' && row.result) task.result = { resultType: 'complete', ...row.result };
  if (row.status === 'failed' && row.result) task.error = row.result;
  return task;
}

function unknownTask(taskId: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown task ${taskId}: it is not yours, has expired (a day after it was made), or never was.`);
}
