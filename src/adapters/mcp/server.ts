import { McpServer, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { Authenticated } from '../../service/authenticate.ts';
import type { JsonSchemas } from '../json-schema.ts';
import type { Service } from '../../service/service.ts';
import { retiredNameResult } from './retired-names.ts';
import { fromStrict } from './strict-schema.ts';
import { registerLiveResources } from './resources.ts';
import { elicitFor, takesFormElicitation } from './elicitation.ts';
import { callOrFollow, registerTaskMethods, takesTasks, TASKS_EXTENSION } from './tasks.ts';
import { callTool, deriveTools, ELICITED_META, listToolsFor, outputSchemaFor, problemResult, type ToolListing } from './tools.ts';
import { BATON_VERSION } from '../../version.ts';
import type { ApiVersion } from '../../domain/api-version.ts';

/** The caller of one MCP request, authenticated by the HTTP route before the SDK sees it. */
export type McpCaller = Authenticated & { readonly requestId: string; readonly listing: ToolListing };

/** The server's instructions, with how a next action becomes a tool call in the caller's version. */
function instructionsFor(version: ApiVersion): string {
  const rule = version === 1 ? NEXT_ACTION_RULE_V1 : NEXT_ACTION_RULE_V2;
  return `Baton coordinates tasks between humans and agents. To work: call \`tasks_claim_next\`; the claimed task carries its description and \`next_actions\` (heartbeat, hand in for review). ${rule} Every write takes an \`idempotency_key\`: resend the same one only to retry the same call (you get the first result, not a second write); without one the server makes one. \`expected_version\` is the \`version\` you read: if it changed, the call is refused with conflict_version. Taking task after task? \`leases_cycle\` hands in (or fails) your lease's task and claims the next in one call. Results are in structuredContent (the REST JSON); a failed call has isError and a problem document with a stable \`code\`, a \`hint\` and \`retryable\`. After a restart, use the \`resume\` prompt. tools/list holds your default tool set; any tool can be called by name, and /mcp?toolsets=work,tasks (or all) lists more.`;
}

const NEXT_ACTION_RULE_V1 = 'Each next action is one tool call: the tool is `operation`, `id` is the id in `href`, `body` gives the other arguments, the Idempotency-Key header is `idempotency_key` and If-Match is `expected_version` (spec/mcp.md).';
const NEXT_ACTION_RULE_V2 =
  "Each next action is one tool call: the tool is `operation`; `id` is its `id`, else the id of the task or lease it is on (a `leases_*` tool takes the lease's); `args` are the other arguments, plus what `fill` names; `key` is `idempotency_key`, and `expected_version` is sent as it is (spec/api.md#versions).";

/**
 * Builds the MCP surface for one caller: a tool per registry operation, the live resources (a task,
 * the caller's inbox and ready queue), the served spec pages as resources, and the resume prompt.
 * Built per request (the SDK's stateless serving), from parts derived once. `subscribe` is whether
 * the serving transport can deliver resource updates (spec/mcp.md § Resources), `tasks` whether it
 * serves the 2026-07-28 revision, whose Tasks extension Baton implements (§ MCP Tasks); nothing else is
 * advertised that a per-request server cannot honour (no `listChanged`: the lists never change
 * within a session).
 */
export function mcpServerFactory(service: Service, pages: ReadonlyMap<string, string>, schemas: JsonSchemas) {
  const tools = deriveTools(service.operations, schemas);
  return (caller: McpCaller, transport: { readonly subscribe: boolean; readonly tasks: boolean }): McpServer => {
    const mcp = new McpServer({ name: 'baton', version: BATON_VERSION }, { instructions: instructionsFor(caller.listing.apiVersion) });
    // Tools are served by low-level handlers: the executor, not the SDK, validates arguments, so a bad
    // argument is a `validation_failed` problem like on REST rather than the SDK's own message.
    mcp.server.registerCapabilities({
      tools: { listChanged: false },
      resources: { listChanged: false, ...(transport.subscribe ? { subscribe: true } : {}) },
      prompts: { listChanged: false },
      ...(transport.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {}),
    });
    mcp.server.setRequestHandler('tools/list', () => ({ tools: listToolsFor(tools, caller, caller.listing) }));
    mcp.server.setRequestHandler('tools/call', async (request, ctx) => {
      const shape = tools.get(request.params.name);
      const renamed = shape ? undefined : retiredNameResult(request.params.name, tools, service.baseUrl);
      if (renamed) return renamed;
      if (!shape) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool ${request.params.name}; tools/list names them all.`);
      const args = request.params.arguments ?? {};
      // A strict host sends every member, null for the ones it leaves out (spec/mcp.md, "Strict schemas").
      const input = caller.listing.schemas === 'strict' ? (fromStrict(args, shape.tool.inputSchema) as Record<string, unknown>) : args;
      const { name } = request.params;
      const attributes = { 'mcp.method.name': 'tools/call', 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': name, 'baton.operation': shape.operation.name };
      // A human at a host that takes elicitation is asked first (spec/mcp.md § Elicitation); elsewhere this runs the call as is.
      const capable = takesFormElicitation(mcp.server.getClientCapabilities());
      const elicitation = await elicitFor(service, shape.operation, input, caller, { capable, responses: ctx.mcpReq.inputResponses });
      if (elicitation.kind === 'input_required') return elicitation.result;
      if (elicitation.kind === 'declined') return problemResult(elicitation.error, service.baseUrl, caller.requestId);
      // A host that takes tasks gets a handle instead of a held request for a call that would wait (spec/mcp.md § MCP Tasks).
      const followed = transport.tasks && takesTasks(mcp.server.getClientCapabilities());
      const result = await service.tracing.inSpan(`tools/call ${name}`, 'internal', attributes, async (span) => {
        const called = followed ? await callOrFollow(service, shape, input, caller) : await callTool(service, shape, input, caller);
        if ('isError' in called && called.isError === true) span?.setAttribute('error.type', 'tool_error');
        return called;
      });
      // The SDK gives a tool result without `content` an empty one, as it does here; the handle's members are the extension's CreateTaskResult.
      if ('taskId' in result) return { resultType: 'task', content: [], ...result };
      if (elicitation.elicited.length > 0) result._meta = { ...result._meta, [ELICITED_META]: elicitation.elicited };
      return mcp.server.projectCallToolResult(result, caller.listing.outputSchemas ? outputSchemaFor(shape, caller.listing) : undefined);
    });
    if (transport.tasks) registerTaskMethods(mcp, service, tools, caller);
    registerLiveResources(mcp, service, caller);
    for (const [file, text] of pages) {
      const uri = `${service.baseUrl}/spec/${file}`;
      mcp.registerResource(file, uri, { title: title(text, file), mimeType: 'text/markdown' }, () => ({ contents: [{ uri, mimeType: 'text/markdown', text }] }));
    }
    mcp.registerPrompt(
      'resume',
      {
        title: 'Resume work after a restart',
        description: 'The resume sequence: who am I, which leases do I hold, what changed since the last event I saw; then carry on with no in-memory state.',
        argsSchema: z.object({ last_event_id: z.string().optional().describe('The last event id you processed (evt_…), if you kept one.') }),
      },
      ({ last_event_id }) => ({ messages: [{ role: 'user', content: { type: 'text', text: resumeSteps(last_event_id) } }] }),
    );
    return mcp;
  };
}

function title(markdown: string, file: string): string {
  return /^#\s+(.+)$/m.exec(markdown)?.[1]?.trim() ?? file;
}

/** The spec's resume sequence, as tool calls (spec/agent-guide.md has the long form). */
function resumeSteps(lastEventId: string | undefined): string {
  // The timeline reads oldest first; without a cursor, the newest page is what happened while away.
  const since = lastEventId ? `{"since": "${lastEventId}"}` : '{"order": "desc"} (no last event id: the newest page, newest first; then keep its sync_cursor)';
  return [
    'Resume your Baton work without relying on memory:',
    '1. Call `whoami`: check your principal, scopes and `open_leases`.',
    '2. Call `leases_list` with {"holder": "me", "state": "active"}: the leases you still hold.',
    '3. For each lease, call `tasks_get` with its task id: status, version, `legal_transitions` and `next_actions`.',
    `4. Call \`events_list\` (tool set tasks: /mcp?toolsets=work,tasks) with ${since}: what happened while you were away.`,
    '5. Continue: `leases_heartbeat` a lease you keep working under, `tasks_hand_in` with a summary when the work is done, or `leases_release` what you drop.',
    'A lease that expired is gone: its task went back to todo; claim again with `tasks_claim_next`. Every write takes an idempotency_key; reuse it only to retry the same call.',
  ].join('\n');
}
