import { type McpServer, ProtocolError, ProtocolErrorCode, type ReadResourceResult, ResourceTemplate } from '@modelcontextprotocol/server';
import type { Authenticated } from '../../service/authenticate.ts';
import type { Service } from '../../service/service.ts';
import type { CallableOperation } from '../../operations/define-operation.ts';
import { listLeases } from '../../operations/leases/list-leases.ts';
import { getTask } from '../../operations/tasks/get-task.ts';
import { listTasks } from '../../operations/tasks/list-tasks.ts';
import { mcpCall } from './tools.ts';

/** The URIs of Baton's live resources (spec/mcp.md § Resources). */
const RESOURCE_URIS = {
  task: (id: string) => `baton://tasks/${id}`,
  inbox: 'baton://inbox',
  ready: 'baton://ready',
} as const;

const JSON_TYPE = 'application/json';
/** How many tasks a list resource shows: the first page, like `tasks_list` without a cursor. */
const PAGE = 50;
/** The fields a ready-queue entry needs to tell whether it is claimable now. */
const READY_FIELDS = ['id', 'title', 'status', 'priority', 'labels', 'assignee', 'blocked_by', 'not_before', 'blocked_reason', 'version'];

/**
 * Registers the task template and the caller's inbox and ready queue. Every read runs an operation
 * through the service as `caller` (tasks_get, tasks_list, leases_list), so scopes, visibility and
 * rate limits are REST's; a refused read is a JSON-RPC error carrying the problem document.
 */
export function registerLiveResources(mcp: McpServer, service: Service, caller: Authenticated & { readonly requestId: string }): void {
  const read = async (operation: CallableOperation, input: Record<string, unknown>): Promise<Record<string, unknown>> => {
    const outcome = await service.execute(operation, input, mcpCall(caller));
    const body = JSON.parse(outcome.body) as Record<string, unknown>;
    if (!outcome.ok) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${String(body['title'])}: ${String(body['detail'])}`, body);
    return body;
  };
  const json = (uri: string, value: unknown): ReadResourceResult => ({ contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(value) }] });

  mcp.registerResource(
    'task',
    new ResourceTemplate(RESOURCE_URIS.task('{id}'), { list: undefined }),
    { title: 'A task', description: 'One task as tasks_get returns it (status, lease, next_actions).', mimeType: JSON_TYPE },
    async (uri, { id }) => json(uri.href, await read(getTask, { id: String(id) })),
  );
  mcp.registerResource(
    'inbox',
    RESOURCE_URIS.inbox,
    { title: 'My work', description: 'Open tasks assigned to you, and the leases you hold now.', mimeType: JSON_TYPE },
    async (uri) => {
      const assigned = await read(listTasks, { assignee: 'me', status: 'todo,in_progress,in_review', limit: PAGE });
      const held = await read(listLeases, { holder: 'me', state: 'active', limit: PAGE });
      return json(uri.href, { assigned: assigned['data'], held: held['data'] });
    },
  );
  mcp.registerResource(
    'ready',
    RESOURCE_URIS.ready,
    { title: 'Ready to claim', description: 'Todo tasks you may claim now: unassigned or yours, unblocked, not scheduled later.', mimeType: JSON_TYPE },
    async (uri) => {
      const now = service.clock.now().getTime();
      const pages = await Promise.all(['me', 'none'].map((assignee) => read(listTasks, { assignee, status: 'todo', limit: PAGE, fields: READY_FIELDS.join(',') })));
      const ready = pages
        .flatMap((page) => page['data'] as Record<string, unknown>[])
        .filter((task) => (task['blocked_by'] as unknown[]).length === 0 && task['blocked_reason'] === null && (typeof task['not_before'] !== 'string' || Date.parse(task['not_before']) <= now))
        .sort((a, b) => Number(b['priority']) - Number(a['priority']) || String(a['id']).localeCompare(String(b['id'])));
      return json(uri.href, { data: ready.slice(0, PAGE) });
    },
  );
}

/**
 * The resources an event changes: its task (task and lease events have the task as subject), and
 * the caller's inbox and ready queue for any task or lease event (a notification means "read
 * again", so one that leaves a view unchanged is allowed).
 */
export function resourcesChangedBy(event: { readonly type: string; readonly subject: string }): string[] {
  if (!event.type.startsWith('task.') && !event.type.startsWith('lease.') && !event.type.startsWith('comment.') && !event.type.startsWith('artifact.')) return [];
  const uris = event.subject.startsWith('tsk_') ? [RESOURCE_URIS.task(event.subject)] : [];
  return event.type.startsWith('task.') || event.type.startsWith('lease.') ? [...uris, RESOURCE_URIS.inbox, RESOURCE_URIS.ready] : uris;
}
