import type { Kysely } from 'kysely';
import { BatonError } from '../errors.ts';
import type { DB } from '../store/schema.ts';
import { principalFromGrant } from '../operations/shared/grants.ts';
import { findGrantAndCount } from '../store/tokens.ts';
import { hashToken, isWellFormedToken } from '../tokens.ts';
import type { Principal } from '../domain/principal.ts';
import type { RateBudget } from '../domain/rate-budget.ts';

export interface AuthenticateDeps {
  readonly db: Kysely<DB>;
  readonly rate: { readonly limit: number; readonly windowS: number };
  /** BATON_OIDC_REQUIRED: a human's bearer token is refused unless the system made it. */
  readonly humansUseSso: boolean;
}

export interface Authenticated {
  readonly principal: Principal;
  readonly budget: RateBudget;
}

/**
 * Resolves `Authorization: Bearer …` to a principal and counts the request against its token's
 * rate window, in one query. A malformed token (bad shape or checksum) costs no query. Throws 401
 * `unauthenticated` / `invalid_token`, or 429 `rate_limited` past the budget.
 */
export async function authenticate(deps: AuthenticateDeps, authorization: string | undefined, now: Date): Promise<Authenticated> {
  const { db, rate } = deps;
  const tokenHash = bearerHash(authorization);
  const windowStart = rateWindowStart(rate.windowS, now);
  const grant = await findGrantAndCount(db, tokenHash, windowStart, now);
  const principal = principalFromGrant(grant, now);
  if (deps.humansUseSso && principal.kind === 'human' && grant?.token_created_by_kind !== 'system') {
    throw new BatonError('invalid_token', `Humans sign in through single sign-on on this server (BATON_OIDC_REQUIRED); token ${principal.tokenId} is refused.`, {
      hint: 'Sign in at /auth/oidc/login; tokens are for agents (and the bootstrap and recovery tokens of the system).',
    });
  }
  return counted(deps, principal, { limit: grant?.rate_limit ?? null, used: grant?.used ?? 0, workspace: workspaceCount(grant) }, now);
}

/** The workspace's shared budget and its use this window, when it has one (workspaces_update `rate_limit`). */
export function workspaceCount(grant: { workspace_rate_limit: number | null; workspace_used: number | null } | undefined): WorkspaceCount | null {
  if (grant?.workspace_rate_limit == null || grant.workspace_used == null) return null;
  return { limit: grant.workspace_rate_limit, used: grant.workspace_used };
}

export interface WorkspaceCount {
  readonly limit: number;
  readonly used: number;
}

/** The start of the fixed rate window `now` falls in, in epoch seconds. */
export function rateWindowStart(windowS: number, now: Date): number {
  return Math.floor(now.getTime() / (windowS * 1000)) * windowS;
}

/**
 * Checks a request already counted against its token's window, and its workspace's shared budget
 * when it has one, and says the budget left (the tighter of the two); 429 past either.
 */
export function counted(deps: AuthenticateDeps, principal: Principal, count: { limit: number | null; used: number; workspace: WorkspaceCount | null }, now: Date): Authenticated {
  const { rate } = deps;
  const windowMs = rate.windowS * 1000;
  const windowStart = rateWindowStart(rate.windowS, now);
  const limit = count.limit ?? rate.limit;
  const used = count.used;
  const resetS = Math.max(1, Math.ceil((windowStart * 1000 + windowMs - now.getTime()) / 1000));
  const own: RateBudget = { limit, remaining: Math.max(0, limit - used), windowS: rate.windowS, resetS };
  const shared: RateBudget | null = count.workspace && { limit: count.workspace.limit, remaining: Math.max(0, count.workspace.limit - count.workspace.used), windowS: rate.windowS, resetS };
  const budget = shared && shared.remaining < own.remaining ? shared : own;
  if (used > limit) {
    throw new BatonError('rate_limited', `Token ${principal.tokenId} made ${limit} requests in this ${rate.windowS} s window; the budget resets in ${resetS} s.`, {
      headers: { 'retry-after': String(resetS), ...rateLimitHeaders(own) },
    });
  }
  if (shared && count.workspace && count.workspace.used > shared.limit) {
    throw new BatonError(
      'rate_limited',
      `Workspace ${principal.workspaceId} used its budget of ${shared.limit} requests in this ${rate.windowS} s window, shared by all its tokens; it resets in ${resetS} s.`,
      { headers: { 'retry-after': String(resetS), ...rateLimitHeaders(shared) } },
    );
  }
  return { principal, budget };
}

/** IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers-10). */
export function rateLimitHeaders(budget: RateBudget): Record<string, string> {
  return {
    'ratelimit-policy': `"default";q=${budget.limit};w=${budget.windowS}`,
    ratelimit: `"default";r=${budget.remaining};t=${budget.resetS}`,
  };
}

/** The SHA-256 of the bearer token in `authorization`; 401 without one. */
function bearerHash(authorization: string | undefined): Buffer {
  if (!authorization) throw new BatonError('unauthenticated', 'No Authorization header was sent.');
  return hashToken(bearer(authorization));
}

/** The token of a `Bearer <token>` header, refused without a lookup unless it has Baton's shape and checksum. */
function bearer(authorization: string): string {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw new BatonError('unauthenticated', 'The Authorization header is not of the form `Bearer <token>`.');
  if (!isWellFormedToken(match[1])) {
    throw new BatonError('invalid_token', 'The bearer token is not a Baton token (bad shape or checksum); it was refused without a lookup.');
  }
  return match[1];
}
