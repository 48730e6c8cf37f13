import { SCOPES } from '../domain/scopes.ts';
import { TASK_STATUSES, TRANSITIONS } from '../domain/task-status.ts';
import { mayCall } from '../operations/authorization.ts';
import type { Principal } from '../service/principal.ts';
import type { Service } from '../service/service.ts';
import { API_PREFIX } from './rest/routes.ts';

/** Interfaces each operation is served on. Grows as adapters land; derived, never per operation. */
const INTERFACES = ['rest'] as const;

/**
 * The capability manifest at GET /api/v1: everything an agent needs to start, derived from the
 * registry. With a token it also says what THAT token may call right now.
 */
export function buildManifest(service: Service, principal: Principal | undefined) {
  return {
    name: 'Baton',
    description: 'Task coordination for humans and software agents: tasks with a server-enforced state machine, an append-only event timeline, idempotent and version-checked writes.',
    version: 'v1',
    base_url: `${service.baseUrl}${API_PREFIX}`,
    auth: {
      mode: 'bearer',
      header: 'Authorization: Bearer <token>',
      token_format: 'bat_ + 30 base62 characters + 6-character CRC32 checksum',
      scopes: SCOPES,
    },
    rate_limits: {
      scope: 'per token, shared by every instance; an agent may have its own limit',
      default: { requests: service.config.rateLimit.limit, window_s: service.config.rateLimit.windowS },
      headers: ['RateLimit-Policy', 'RateLimit'],
      exceeded: '429 rate_limited with Retry-After',
    },
    approvals: 'Operations whose approval is destructive or outward return 202 with a pending approval unless the caller is a human with approvals:decide; such a human approves (it runs then, once, as the requester) or denies.',
    conventions: {
      idempotency: 'Every write needs an Idempotency-Key header (≤ 255 chars), remembered 24 h per principal; a retry returns the original response with Idempotency-Replayed: true.',
      concurrency: 'Reads return ETag: "<version>"; send it back as If-Match on writes; a mismatch is 409 conflict_version.',
      pagination: 'Lists return data, has_more, next_cursor and sync_cursor; limit 1–100, default 25.',
      deltas: 'Pass a sync_cursor (an event id) as since to get only what changed after it.',
      errors: 'Every error is application/problem+json with a stable code, a hint and retryable.',
    },
    entities: [
      { name: 'Task', id_prefix: 'tsk_', href: `${API_PREFIX}/tasks`, statuses: TASK_STATUSES, transitions: TRANSITIONS },
      { name: 'Event', id_prefix: 'evt_', href: `${API_PREFIX}/events` },
    ],
    operations: service.operations.map((op) => ({
      name: op.name,
      summary: op.summary,
      kind: op.kind,
      scope: op.scope,
      approval: op.approval,
      method: op.http.method,
      path: `${API_PREFIX}${op.http.path}`,
      interfaces: INTERFACES,
      ...(principal ? { allowed: mayCall(principal, op.name, op.scope), needs_approval: op.approval !== 'none' && !(principal.kind === 'human' && principal.scopes.has('approvals:decide')) } : {}),
    })),
    ...(principal ? { you: { id: principal.id, kind: principal.kind, scopes: SCOPES.filter((s) => principal.scopes.has(s)) } } : {}),
    links: {
      openapi: `${API_PREFIX}/openapi.json`,
      whoami: `${API_PREFIX}/whoami`,
      docs: '/spec/index.md',
      agent_guide: '/spec/agent-guide.md',
      errors: '/spec/errors.md',
    },
  };
}
