/**
 * MCP Tasks' handles (spec/mcp.md, "MCP Tasks"), kept in the database so that any instance answers
 * any poll: what the MCP adapter creates when a tool call would wait, finds on `tasks/get`, and
 * ends once what the call waits for has come (or the host cancels). Each runs in the caller's
 * workspace, and a principal sees only its own tasks.
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Principal } from '../domain/principal.ts';
import type { Ids } from '../ids.ts';
import { endMcpTask, findMcpTask, insertMcpTask, type McpTaskEnd, type McpTaskRow } from '../store/mcp-tasks.ts';
import type { DB } from '../store/schema.ts';
import { inWorkspace } from '../store/workspace-scope.ts';

export type { McpTaskEnd, McpTaskRow };

/** How long a task stays readable after it was created: a host may come back for its result after a restart. */
export const MCP_TASK_TTL_MS = 24 * 3600 * 1000;

/** What a tool call that would wait leaves behind: the tool, the input each poll calls it with, and what it follows. */
export interface NewMcpTask {
  readonly tool: string;
  readonly input: Record<string, unknown>;
  readonly follows: 'wait' | 'approval';
  /** A wait's own seconds, from now: at their end the task completes with what it has. */
  readonly waitS?: number;
}

export interface McpTasks {
  create(principal: Principal, task: NewMcpTask): Promise<McpTaskRow>;
  /** The principal's task, or undefined when it is unknown, another's, or expired. */
  find(principal: Principal, id: string): Promise<McpTaskRow | undefined>;
  /** Ends the principal's task if it is still working; returns it as it now stands. */
  end(principal: Principal, id: string, end: McpTaskEnd): Promise<McpTaskRow | undefined>;
}

export function mcpTasks(deps: { db: Kysely<DB>; clock: Clock; ids: Ids }): McpTasks {
  const { db, clock, ids } = deps;
  const bound = <T>(principal: Principal, work: (tx: Kysely<DB>) => Promise<T>) => inWorkspace(db, principal.workspaceId, work, principal.id);
  return {
    create: (principal, task) => {
      const now = clock.now();
      return bound(principal, (tx) =>
        insertMcpTask(tx, {
          id: ids.make('mct'),
          principal_id: principal.id,
          tool: task.tool,
          input: task.input,
          follows: task.follows,
          wait_until: task.waitS === undefined ? null : new Date(now.getTime() + task.waitS * 1000),
          created_at: now,
          expires_at: new Date(now.getTime() + MCP_TASK_TTL_MS),
        }),
      );
    },
    find: (principal, id) => bound(principal, (tx) => findMcpTask(tx, id, principal.id, clock.now())),
    end: (principal, id, end) => bound(principal, (tx) => endMcpTask(tx, id, principal.id, end, clock.now())),
  };
}
