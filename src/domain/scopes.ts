/**
 * Token scopes (DESIGN.md §6). An operation requires exactly one. `metrics:read` is for GET /metrics
 * alone (a Prometheus scraper's token); `agents:admin` admits it too, so admins made before it existed can scrape.
 */
export const SCOPES = [
  'tasks:read',
  'tasks:write',
  'tasks:claim',
  'tasks:review',
  'events:read',
  'approvals:decide',
  'agents:admin',
  'webhooks:manage',
  'artifacts:write',
  'metrics:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * A human member's scopes: work on tasks and review them. What a human announced by the auth
 * provider gets; deciding approvals and administering agents or webhooks (`approvals:decide`,
 * `agents:admin`, `webhooks:manage`) stay with humans an admin grants them to.
 */
export const MEMBER_SCOPES: readonly Scope[] = ['tasks:read', 'tasks:write', 'tasks:claim', 'tasks:review', 'events:read', 'artifacts:write'];

export const PRINCIPAL_KINDS = ['human', 'agent'] as const;
export type PrincipalKind = (typeof PRINCIPAL_KINDS)[number];

/** Who wrote a row or an event: a human, an agent, or the server itself. */
export const ACTOR_KINDS = ['human', 'agent', 'system'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export interface ActorRef {
  readonly id: string;
  readonly kind: ActorKind;
}

/** The server's own identity, for work no principal asked for (lease expiry, inbound webhooks). */
export const SYSTEM_ACTOR: ActorRef = { id: 'system', kind: 'system' };
