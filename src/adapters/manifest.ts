import { SCOPES } from '../domain/scopes.ts';
import { BatonError } from '../errors.ts';
import { writeHeaders } from '../operations/tasks/task-view.ts';
import { TASK_STATUSES, TRANSITIONS } from '../domain/task-status.ts';
import { mayInvoke } from '../operations/authorization.ts';
import { followableOf, isCallable, type Operation } from '../operations/define-operation.ts';
import type { Principal } from '../domain/principal.ts';
import type { Service } from '../service/service.ts';
import { MCP_PATH } from './mcp/http.ts';
import { DEFAULT_TOOLSETS, toolsetOf } from './mcp/toolsets.ts';
import type { CompactManifest, Manifest } from './manifest-schema.ts';
import { type ApiVersion, apiPrefix } from '../domain/api-version.ts';

/**
 * The interfaces derived from the registry, each with the rule that decides whether it serves an
 * operation. An operation's `interfaces` come from these rules, never from a per-operation list.
 */
const INTERFACES: readonly { readonly name: string; serves(operation: Operation): boolean }[] = [
  // Every operation has an HTTP binding (src/adapters/rest/routes.ts) …
  { name: 'rest', serves: () => true },
  // … and, unless it is a stream, an MCP tool of the same name (src/adapters/mcp/tools.ts).
  { name: 'mcp', serves: isCallable },
  // … and a GraphQL field: reads are queries, writes mutations, streams subscriptions (src/adapters/graphql/schema.ts).
  { name: 'graphql', serves: () => true },
];

/** How a v2 agent sends a next action (operations/tasks/v2-answer.ts). */
const V2_ACTIONS = "Call each next_actions entry's operation (route: operations) with id in the path (absent: the task's; leases_*: its lease's), key as Idempotency-Key, expected_version as If-Match, args (plus what fill names) as body or a GET's query.";

export type ManifestView = 'compact' | 'full';

/** The view a request gets: `?view=` when given, else compact for an agent's token and full otherwise (humans, discovery, the web app). */
export function manifestView(query: string | undefined, principal: Principal | undefined): ManifestView {
  if (query === 'compact' || query === 'full') return query;
  if (query !== undefined) throw new BatonError('invalid_parameter', `view must be compact or full, not ${JSON.stringify(query)}.`, { extra: { errors: [{ pointer: '/view', detail: 'compact or full', location: 'query' }] } });
  return principal?.kind === 'agent' ? 'compact' : 'full';
}

/**
 * The compact manifest an agent gets by default (budget: 3 KB, held by test/agent/budgets.test.ts):
 * who it is, how to start (a ready `next_actions` claim), the conventions in one line each, the
 * features a list of operations hides, and the operations of its default MCP tool sets it may call
 * (streams included) as `METHOD path`. Every other operation is one link away (`links.full`).
 */
export function buildCompactManifest(service: Service, principal: Principal, version: ApiVersion = 1): CompactManifest {
  const prefix = apiPrefix(version);
  const defaults: readonly string[] = DEFAULT_TOOLSETS[principal.kind];
  const allowed = service.operations.filter((op) => mayInvoke(principal, op) && (!isCallable(op) || defaults.includes(toolsetOf(op))));
  const decides = principal.kind === 'human' && principal.scopes.has('approvals:decide');
  return {
    name: 'Baton',
    version: `v${version}`,
    base_url: `${service.baseUrl}${prefix}`,
    you: { id: principal.id, kind: principal.kind, scopes: SCOPES.filter((s) => principal.scopes.has(s)) },
    next_actions: allowed.some((op) => op.name === 'tasks_claim_next')
      ? [{ operation: 'tasks_claim_next', method: 'POST', href: `${prefix}/tasks/claim`, headers: writeHeaders() }]
      : [],
    conventions: {
      auth: 'Authorization: Bearer <token>.',
      next_actions: version === 1 ? 'Send each next_actions entry as given, with what fill names written in (its key is fresh).' : V2_ACTIONS,
      idempotency: 'Every write needs a fresh Idempotency-Key; resend it only to retry.',
      concurrency: 'Send the ETag you read as If-Match; else 409 conflict_version.',
      leases: 'Heartbeat a lease every heartbeat_interval_s; send its lease_epoch on task writes; leases_cycle hands in and claims the next.',
      errors: 'problem+json: branch on code, follow hint, retry if retryable.',
    },
    features: features(service),
    operations: Object.fromEntries(allowed.map((op) => [op.name, `${op.http.method} ${prefix}${op.http.path}`])),
    needs_approval: decides ? [] : allowed.filter((op) => op.approval !== 'none').map((op) => op.name),
    task_statuses: [...TASK_STATUSES],
    mcp: { url: `${service.baseUrl}${MCP_PATH}${version === 1 ? '' : '?api=v2'}`, toolsets: `${defaults.join(',')} (default); ?toolsets=work,tasks or all; ?schemas=strict` },
    links: {
      full: `${prefix}?view=full`,
      openapi: `${prefix}/openapi.json`,
      agent_guide: '/spec/agent-guide.md',
      errors: '/spec/errors.md',
      compact: `${prefix}?view=compact`,
    },
  };
}

/**
 * What an agent may use that a list of operations does not show, each with where it lives (an
 * operation and its members): both views carry it, and test/agent/budgets.test.ts holds every name
 * in it to the registry.
 */
function features(service: Service): Manifest['features'] {
  return {
    search: 'tasks_list q=<words>, ranked.',
    subtasks: 'tasks_create parent_id; tasks_list parent=<id>.',
    scheduling: 'not_before, due_at on tasks_create and tasks_update.',
    attempts: `tasks_create max_attempts (default ${service.config.maxAttempts}); leases_release outcome=failed and a reason: a failed attempt.`,
    dead_letter: 'tasks_list blocked_reason=attempts_exhausted; a human requeues.',
    stream: 'events_stream: SSE, resume with Last-Event-ID.',
  };
}

/**
 * The capability manifest at GET /api/v1 (`?view=full`): everything an agent needs to start, derived from the
 * registry. With a token it also says what THAT token may call right now.
 */
export function buildManifest(service: Service, principal: Principal | undefined, version: ApiVersion = 1): Manifest {
  const prefix = apiPrefix(version);
  return {
    name: 'Baton',
    description: 'Task coordination for humans and software agents: tasks with a server-enforced state machine, an append-only event timeline, idempotent and version-checked writes.',
    version: `v${version}`,
    base_url: `${service.baseUrl}${prefix}`,
    auth: {
      mode: 'bearer',
      header: 'Authorization: Bearer <token>',
      token_format: 'bat_ + 30 base62 characters + 6-character CRC32 checksum',
      scopes: [...SCOPES],
    },
    rate_limits: {
      scope: 'per token, shared by every instance; an agent may have its own limit',
      default: { requests: service.config.rateLimit.limit, window_s: service.config.rateLimit.windowS },
      headers: ['RateLimit-Policy', 'RateLimit'],
      exceeded: '429 rate_limited with Retry-After',
    },
    attempts: {
      default_max_attempts: service.config.maxAttempts,
      backoff_s: [...service.config.retryBackoffS],
      rule: 'A failed attempt (a release with outcome failed, a lapsed lease) waits out the next back-off before the task may be claimed again; after max_attempts (the task\'s own, else default_max_attempts) it leaves the queue: blocked, blocked_reason attempts_exhausted.',
    },
    // The bounds this server enforces, as its schemas say them (operations/configured-bounds.ts).
    leases: { ttl_s: { default: service.config.leaseTtl.defaultS, min: service.config.leaseTtl.minS, max: service.config.leaseTtl.maxS } },
    approvals: 'Operations whose approval is destructive or outward return 202 with a pending approval unless the caller is a human with approvals:decide; such a human approves (it runs then, once, as the requester) or denies.',
    conventions: {
      idempotency: 'Every write needs an Idempotency-Key header (≤ 255 chars), remembered 24 h per principal; a retry returns the original response with Idempotency-Replayed: true.',
      concurrency: 'Reads return ETag: "<version>"; send it back as If-Match on writes; a mismatch is 409 conflict_version.',
      pagination: 'Lists return data, has_more, next_cursor and sync_cursor; limit 1–100, default 25.',
      deltas: 'Pass a sync_cursor (an event id) as since to get only what changed after it.',
      errors: 'Every error is application/problem+json with a stable code, a hint and retryable.',
    },
    features: features(service),
    entities: [
      { name: 'Task', id_prefix: 'tsk_', href: `${prefix}/tasks`, statuses: [...TASK_STATUSES], transitions: Object.fromEntries(TASK_STATUSES.map((s) => [s, [...TRANSITIONS[s]]])) },
      { name: 'Event', id_prefix: 'evt_', href: `${prefix}/events` },
    ],
    operations: service.operations.map((op) => ({
      name: op.name,
      summary: op.summary,
      kind: op.kind,
      scope: op.scope,
      approval: op.approval,
      method: op.http.method,
      path: `${prefix}${op.http.path}`,
      interfaces: INTERFACES.filter((i) => i.serves(op)).map((i) => i.name),
      ...(principal ? { allowed: mayInvoke(principal, op), needs_approval: op.approval !== 'none' && !(principal.kind === 'human' && principal.scopes.has('approvals:decide')) } : {}),
    })),
    ...(principal ? { you: { id: principal.id, kind: principal.kind, scopes: SCOPES.filter((s) => principal.scopes.has(s)) } } : {}),
    mcp: {
      url: `${service.baseUrl}${MCP_PATH}${version === 1 ? '' : '?api=v2'}`,
      transport: 'Streamable HTTP (2026-07-28, and 2025-11-25 clients), the same bearer token; or stdio through `npx baton-tasks mcp` with BATON_URL and BATON_TOKEN',
      tools: 'one per operation, named as the operation; arguments are the operation input plus idempotency_key (writes) and expected_version (versioned writes)',
      toolsets: 'work (the default for agents), tasks (humans get work and tasks), admin: /mcp?toolsets=work,tasks or all; agent means work,tasks',
      schemas: 'loose (default) or strict (OpenAI and Anthropic strict modes): /mcp?schemas=strict',
      resources: 'the /spec/*.md pages',
      prompts: ['resume'],
      tasks: `io.modelcontextprotocol/tasks on 2026-07-28 over HTTP: to a host that declares it, ${followableTools(service.operations).join(', ')} with seconds to wait, and a write that waits for approval, answer a task handle (tasks/get, tasks/cancel)`,
    },
    links: {
      openapi: `${prefix}/openapi.json`,
      whoami: `${prefix}/whoami`,
      docs: '/spec/index.md',
      agent_guide: '/spec/agent-guide.md',
      errors: '/spec/errors.md',
      compact: `${prefix}?view=compact`,
    },
  };
}

/** The tools an MCP host may follow as tasks rather than wait on (spec/mcp.md, "MCP Tasks"). */
function followableTools(operations: readonly Operation[]): string[] {
  return operations.filter((op) => followableOf(op) !== undefined).map((op) => op.name);
}
