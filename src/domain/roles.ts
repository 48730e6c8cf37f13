import { MEMBER_SCOPES, SCOPES, type Scope } from './scopes.ts';

/** A human's roles, most powerful first (spec/identity.md, "Roles"). Agents keep scoped tokens. */
export const ROLES = ['owner', 'admin', 'member', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * The scopes each role gives. A viewer reads everything and writes nothing; a member creates,
 * comments, claims and reviews, and decides approvals only when an admin grants it
 * `approvals:decide` (agents_update); an admin holds every scope; an owner is an admin whom only
 * another owner may demote, and the only one who makes owners.
 */
export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: SCOPES,
  admin: SCOPES,
  member: MEMBER_SCOPES,
  viewer: ['tasks:read', 'events:read'],
};

/** How a target names a role rather than a principal: `role:admin` (an ask's `to`, BATON_ESCALATE_TO). */
export const ROLE_PREFIX = 'role:';

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** What `role:<x>` names (`x`, not yet checked to be a role); undefined for a principal's id or name. */
export function targetRole(target: string): string | undefined {
  return target.startsWith(ROLE_PREFIX) ? target.slice(ROLE_PREFIX.length) : undefined;
}
