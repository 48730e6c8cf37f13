/**
 * The typed client of Baton's REST API in the checkout, used by the CLI and the tests. The package
 * `baton-tasks-client` is built from this folder by packages/client/build.ts, with one method per
 * operation generated from the registry (docs/client.md).
 *
 * Every input and output type is derived from the operation registry's own Zod schemas (type-only
 * imports: nothing of the server is loaded at run time), so a change to an operation changes the
 * client's types with it. Each method is one REST route; test/cli/client.test.ts checks every
 * route here against the registry's HTTP bindings.
 */
import type { answerAsk } from '../operations/asks/answer-ask.ts';
import type { cancelAsk } from '../operations/asks/cancel-ask.ts';
import type { createAsk } from '../operations/asks/create-ask.ts';
import type { getAsk } from '../operations/asks/get-ask.ts';
import type { listAsks } from '../operations/asks/list-asks.ts';
import type { listInbox } from '../operations/inbox/list-inbox.ts';
import type { getInsight } from '../operations/insight/get-insight.ts';
import type { getExport } from '../operations/exports/get-export.ts';
import type { markInbox } from '../operations/inbox/mark-inbox.ts';
import type { wait } from '../operations/inbox/wait.ts';
import type { createWorkspace } from '../operations/workspaces/create-workspace.ts';
import type { listWorkspaces } from '../operations/workspaces/list-workspaces.ts';
import type { z } from 'zod';
import type { createAgent } from '../operations/agents/create-agent.ts';
import type { createToken } from '../operations/agents/create-token.ts';
import type { getAgent } from '../operations/agents/get-agent.ts';
import type { listAgents } from '../operations/agents/list-agents.ts';
import type { listTokens } from '../operations/agents/list-tokens.ts';
import type { revokeToken } from '../operations/agents/revoke-token.ts';
import type { rotateToken } from '../operations/agents/rotate-token.ts';
import type { updateAgent } from '../operations/agents/update-agent.ts';
import type { createBudget } from '../operations/budgets/create-budget.ts';
import type { deleteBudget } from '../operations/budgets/delete-budget.ts';
import type { getBudget } from '../operations/budgets/get-budget.ts';
import type { listBudgets } from '../operations/budgets/list-budgets.ts';
import type { updateBudget } from '../operations/budgets/update-budget.ts';
import type { approveApproval } from '../operations/approvals/approve-approval.ts';
import type { denyApproval } from '../operations/approvals/deny-approval.ts';
import type { getApproval } from '../operations/approvals/get-approval.ts';
import type { listApprovals } from '../operations/approvals/list-approvals.ts';
import type { createComment } from '../operations/comments/create-comment.ts';
import type { listComments } from '../operations/comments/list-comments.ts';
import type { listEvents } from '../operations/events/list-events.ts';
import type { streamEvents } from '../operations/events/stream-events.ts';
import type { getLease } from '../operations/leases/get-lease.ts';
import type { heartbeatLease } from '../operations/leases/heartbeat-lease.ts';
import type { listLeases } from '../operations/leases/list-leases.ts';
import type { releaseLease } from '../operations/leases/release-lease.ts';
import type { whoami } from '../operations/meta/whoami.ts';
import type { listReservations } from '../operations/reservations/list-reservations.ts';
import type { appendLog } from '../operations/runs/append-log.ts';
import type { getRun } from '../operations/runs/get-run.ts';
import type { listRuns } from '../operations/runs/list-runs.ts';
import type { reportUsage } from '../operations/runs/report-usage.ts';
import type { createTemplate } from '../operations/templates/create-template.ts';
import type { deleteTemplate } from '../operations/templates/delete-template.ts';
import type { getTemplate } from '../operations/templates/get-template.ts';
import type { instantiateTemplate } from '../operations/templates/instantiate-template.ts';
import type { listTemplates } from '../operations/templates/list-templates.ts';
import type { updateTemplate } from '../operations/templates/update-template.ts';
import type { claimNextTask } from '../operations/tasks/claim-next-task.ts';
import type { claimTask } from '../operations/tasks/claim-task.ts';
import type { createTask } from '../operations/tasks/create-task.ts';
import type { deleteTask } from '../operations/tasks/delete-task.ts';
import type { getTask } from '../operations/tasks/get-task.ts';
import type { handInTask } from '../operations/tasks/hand-in-task.ts';
import type { listTaskEvents } from '../operations/tasks/list-task-events.ts';
import type { listTasks } from '../operations/tasks/list-tasks.ts';
import type { reviewTask } from '../operations/tasks/review-task.ts';
import type { updateTask } from '../operations/tasks/update-task.ts';
import { problemOf } from './problem.ts';
import { followStream, type StreamOptions } from './stream.ts';

export { BatonProblem } from './problem.ts';

/** What a registry entry contributes to the client: its input and output schemas. */
interface Schemas {
  readonly input: z.ZodType;
  readonly output: z.ZodType;
}
/** What a call sends: the operation's input as a caller writes it (before defaults and coercion). */
export type InputOf<O extends Schemas> = z.input<O['input']>;
/** What a call answers: the operation's output. */
export type OutputOf<O extends Schemas> = z.output<O['output']>;

export type Task = OutputOf<typeof getTask>;
export type TaskEvent = OutputOf<typeof streamEvents>;
export type { Problem } from './problem.ts';

export interface ClientOptions {
  /** The server, e.g. `https://baton.example.com` (without /api/v1). */
  readonly baseUrl: string;
  /** A bearer token, `bat_…`. */
  readonly token: string;
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Makes the Idempotency-Key of a write that was given none; defaults to a random UUID. */
  readonly idempotencyKey?: () => string;
}

export interface CallOptions {
  /** Sent as Idempotency-Key on a write: the same key replays the first answer instead of writing twice. */
  readonly idempotencyKey?: string;
  /** Sent as If-Match: the write is refused (`version_conflict`) unless the resource is still at this version. */
  readonly ifMatch?: number;
  readonly signal?: AbortSignal;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

/** The transport every route shares: one request, its problem turned into a `BatonProblem`. */
export interface Transport {
  /** `accept` replaces `application/json` (a `download` read's streamed formats). */
  send(method: Method, path: string, input: Record<string, unknown>, options?: CallOptions & { accept?: string }): Promise<Response>;
  readonly options: ClientOptions;
}

function transport(options: ClientOptions): Transport {
  const doFetch = options.fetch ?? fetch;
  const api = `${options.baseUrl.replace(/\/+$/, '')}/api/v1`;
  const newKey = options.idempotencyKey ?? (() => crypto.randomUUID());
  return {
    options,
    async send(method, path, input, call = {}) {
      const rest: Record<string, unknown> = { ...input };
      // `{id}` path parameters come out of the input, as the REST adapter puts them back.
      const url = new URL(
        api +
          path.replace(/\{(\w+)\}/g, (_, name: string) => {
            const value = rest[name];
            delete rest[name];
            return encodeURIComponent(text(value));
          }),
      );
      const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: call.accept ?? 'application/json' };
      let body: string | undefined;
      if (method === 'GET' || method === 'DELETE') {
        for (const [key, value] of Object.entries(rest)) {
          if (value !== undefined) url.searchParams.set(key, Array.isArray(value) ? value.map(text).join(',') : text(value));
        }
      } else {
        body = JSON.stringify(rest);
        headers['content-type'] = 'application/json';
      }
      if (method !== 'GET') headers['idempotency-key'] = call.idempotencyKey ?? newKey();
      if (call.ifMatch !== undefined) headers['if-match'] = `"${call.ifMatch}"`;
      const response = await doFetch(url, { method, headers, ...(body === undefined ? {} : { body }), ...(call.signal ? { signal: call.signal } : {}) });
      if (!response.ok) throw await problemOf(response);
      return response;
    },
  };
}

/** A query or path value as text: strings as they are, numbers and booleans as JSON writes them. */
function text(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** One REST route as a typed function; `method` and `path` say which (the parity test reads them). */
function route<O extends Schemas>(t: Transport, method: Method, path: string) {
  const call = async (input: InputOf<O>, options?: CallOptions): Promise<OutputOf<O>> => {
    const response = await t.send(method, path, input as Record<string, unknown>, options);
    return (await response.json()) as OutputOf<O>;
  };
  return Object.assign(call, { method, path });
}

/** A Baton client: one method per REST route, grouped by resource. */
export function createClient(options: ClientOptions) {
  const t = transport(options);
  return {
    whoami: route<typeof whoami>(t, 'GET', '/whoami'),
    tasks: {
      list: route<typeof listTasks>(t, 'GET', '/tasks'),
      get: route<typeof getTask>(t, 'GET', '/tasks/{id}'),
      create: route<typeof createTask>(t, 'POST', '/tasks'),
      update: route<typeof updateTask>(t, 'PATCH', '/tasks/{id}'),
      delete: route<typeof deleteTask>(t, 'DELETE', '/tasks/{id}'),
      claim: route<typeof claimTask>(t, 'POST', '/tasks/{id}/claim'),
      claimNext: route<typeof claimNextTask>(t, 'POST', '/tasks/claim'),
      events: route<typeof listTaskEvents>(t, 'GET', '/tasks/{id}/events'),
      handIn: route<typeof handInTask>(t, 'POST', '/tasks/{id}/hand_in'),
      review: route<typeof reviewTask>(t, 'POST', '/tasks/{id}/review'),
    },
    comments: {
      list: route<typeof listComments>(t, 'GET', '/tasks/{id}/comments'),
      create: route<typeof createComment>(t, 'POST', '/tasks/{id}/comments'),
    },
    leases: {
      list: route<typeof listLeases>(t, 'GET', '/leases'),
      get: route<typeof getLease>(t, 'GET', '/leases/{id}'),
      heartbeat: route<typeof heartbeatLease>(t, 'POST', '/leases/{id}/heartbeat'),
      release: route<typeof releaseLease>(t, 'POST', '/leases/{id}/release'),
    },
    events: {
      list: route<typeof listEvents>(t, 'GET', '/events'),
      /**
       * Follows the timeline (Server-Sent Events) until `signal` aborts, reconnecting after a
       * dropped connection from the last event seen (Last-Event-ID), so nothing is missed or repeated.
       */
      follow: Object.assign(
        (input: InputOf<typeof streamEvents>, stream: StreamOptions = {}): AsyncIterable<TaskEvent> =>
          followStream<TaskEvent>(t, '/events/stream', input as Record<string, unknown>, stream),
        { method: 'GET' as const, path: '/events/stream' },
      ),
    },
    agents: {
      list: route<typeof listAgents>(t, 'GET', '/agents'),
      get: route<typeof getAgent>(t, 'GET', '/agents/{id}'),
      create: route<typeof createAgent>(t, 'POST', '/agents'),
      update: route<typeof updateAgent>(t, 'PATCH', '/agents/{id}'),
    },
    workspaces: {
      list: route<typeof listWorkspaces>(t, 'GET', '/workspaces'),
      create: route<typeof createWorkspace>(t, 'POST', '/workspaces'),
    },
    tokens: {
      list: route<typeof listTokens>(t, 'GET', '/agents/{id}/tokens'),
      create: route<typeof createToken>(t, 'POST', '/agents/{id}/tokens'),
      revoke: route<typeof revokeToken>(t, 'DELETE', '/tokens/{id}'),
      rotate: route<typeof rotateToken>(t, 'POST', '/tokens/{id}/rotate'),
    },
    asks: {
      list: route<typeof listAsks>(t, 'GET', '/asks'),
      get: route<typeof getAsk>(t, 'GET', '/asks/{id}'),
      create: route<typeof createAsk>(t, 'POST', '/tasks/{id}/asks'),
      answer: route<typeof answerAsk>(t, 'POST', '/asks/{id}/answer'),
      cancel: route<typeof cancelAsk>(t, 'POST', '/asks/{id}/cancel'),
    },
    runs: {
      list: route<typeof listRuns>(t, 'GET', '/runs'),
      get: route<typeof getRun>(t, 'GET', '/runs/{id}'),
      usage: route<typeof reportUsage>(t, 'POST', '/leases/{id}/usage'),
      log: route<typeof appendLog>(t, 'POST', '/leases/{id}/log'),
    },
    reservations: {
      list: route<typeof listReservations>(t, 'GET', '/reservations'),
    },
    inbox: {
      list: route<typeof listInbox>(t, 'GET', '/inbox'),
      mark: route<typeof markInbox>(t, 'POST', '/inbox/mark'),
    },
    insight: {
      get: route<typeof getInsight>(t, 'GET', '/insight'),
    },
    exports: {
      /** One page of a window's runs, usage or events. */
      get: route<typeof getExport>(t, 'GET', '/exports/{dataset}'),
      /** The whole window as JSON lines or CSV, streamed: the response body, to read as it arrives. */
      download: Object.assign(
        async (input: Omit<InputOf<typeof getExport>, 'cursor' | 'limit'>, format: 'jsonl' | 'csv', options: CallOptions = {}): Promise<ReadableStream<Uint8Array>> => {
          const response = await t.send('GET', '/exports/{dataset}', input, { ...options, accept: format === 'csv' ? 'text/csv' : 'application/x-ndjson' });
          if (!response.body) throw new Error('The export answered without a body.');
          return response.body;
        },
        { method: 'GET' as const, path: '/exports/{dataset}' },
      ),
    },
    /** Blocks (at most `timeout_s`, ≤ 60 s) until something arrives for the caller; resume with the returned `cursor`. */
    wait: route<typeof wait>(t, 'GET', '/wait'),
    approvals: {
      list: route<typeof listApprovals>(t, 'GET', '/approvals'),
      get: route<typeof getApproval>(t, 'GET', '/approvals/{id}'),
      approve: route<typeof approveApproval>(t, 'POST', '/approvals/{id}/approve'),
      deny: route<typeof denyApproval>(t, 'POST', '/approvals/{id}/deny'),
    },
    budgets: {
      list: route<typeof listBudgets>(t, 'GET', '/budgets'),
      get: route<typeof getBudget>(t, 'GET', '/budgets/{id}'),
      create: route<typeof createBudget>(t, 'POST', '/budgets'),
      update: route<typeof updateBudget>(t, 'PATCH', '/budgets/{id}'),
      delete: route<typeof deleteBudget>(t, 'DELETE', '/budgets/{id}'),
    },
    templates: {
      list: route<typeof listTemplates>(t, 'GET', '/templates'),
      get: route<typeof getTemplate>(t, 'GET', '/templates/{id}'),
      create: route<typeof createTemplate>(t, 'POST', '/templates'),
      update: route<typeof updateTemplate>(t, 'PATCH', '/templates/{id}'),
      delete: route<typeof deleteTemplate>(t, 'DELETE', '/templates/{id}'),
      /** Makes the whole graph, or with `dry_run: true` answers it rendered and writes nothing. */
      instantiate: route<typeof instantiateTemplate>(t, 'POST', '/templates/{id}/instantiate'),
    },
  };
}

export type BatonClient = ReturnType<typeof createClient>;
export type { StreamOptions } from './stream.ts';
