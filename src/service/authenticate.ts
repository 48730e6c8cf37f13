import type { Kysely } from 'kysely';
import { BatonError } from '../errors.ts';
import type { DB } from '../store/schema.ts';
import { principalFromGrant } from '../operations/shared/grants.ts';
import { findGrantAndCount, type RateCharge, type TokenGrant } from '../store/tokens.ts';
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
 * Resolves `Authorization: Bearer …` to a principal and counts the request's `operations` (1 but for a
 * GraphQL document's mutations or an MCP batch's tool calls) against its token's rate window, in one
 * query. A malformed token (bad shape or checksum) costs no query. Throws 401 `unauthenticated` /
 * `invalid_token`, or 429 `rate_limited` past the budget or when the operations do not all fit in it.
 */
export async function authenticate(deps: AuthenticateDeps, authorization: string | undefined, request: { now: Date; operations: number }): Promise<Authenticated> {
  const { db } = deps;
  const { now, operations } = request;
  const tokenHash = bearerHash(authorization);
  const grant = await findGrantAndCount(db, tokenHash, rateCharge(deps, now, operations), now);
  const principal = principalFromGrant(grant, now);
  if (deps.humansUseSso && principal.kind === 'human' && grant?.token_created_by_kind !== 'system') {
    throw new BatonError('invalid_token', `Humans sign in through single sign-on on this server (BATON_OIDC_REQUIRED); token ${principal.tokenId} is refused.`, {
      hint: 'Sign in at /auth/oidc/login; tokens are for agents (and the bootstrap and recovery tokens of the system).',
    });
  }
  return counted(deps, principal, grantCount(grant, operations), now);
}

/** What a request of `operations` spends of the rate window `now` falls in. */
export function rateCharge(deps: AuthenticateDeps, now: Date, operations: number): RateCharge {
  return { windowStart: rateWindowStart(deps.rate.windowS, now), operations, defaultLimit: deps.rate.limit };
}

/** The count `counted` checks, from a grant `findGrantAndCount` answered for a request of `operations`. */
export function grantCount(grant: TokenGrant | undefined, operations: number): Count {
  return { limit: grant?.rate_limit ?? null, used: grant?.used ?? 0, workspace: workspaceCount(grant), operations, charged: grant?.charged ?? operations };
}

/** The workspace's shared budget and its use this window, when it has one (workspaces_update `rate_limit`). */
function workspaceCount(grant: { workspace_rate_limit: number | null; workspace_used: number | null } | undefined): WorkspaceCount | null {
  if (grant?.workspace_rate_limit == null || grant.workspace_used == null) return null;
  return { limit: grant.workspace_rate_limit, used: grant.workspace_used };
}

interface WorkspaceCount {
  readonly limit: number;
  readonly used: number;
}

/** The start of the fixed rate window `now` falls in, in epoch seconds. */
export function rateWindowStart(windowS: number, now: Date): number {
  return Math.floor(now.getTime() / (windowS * 1000)) * windowS;
}

/** A request's count in its token's window (and its workspace's), as `findGrantAndCount` answered. */
export interface Count {
  readonly limit: number | null;
  readonly used: number;
  readonly workspace: WorkspaceCount | null;
  /** The operations the request carries. */
  readonly operations: number;
  /** What it was charged: `operations`, or 1 when they did not all fit. */
  readonly charged: number;
}

/**
 * Checks a request already counted against its token's window, and its workspace's shared budget
 * when it has one, and says the budget left (the tighter of the two); 429 past either, or when the
 * request's operations did not all fit in what was left (it was then charged as one request).
 */
export function counted(deps: AuthenticateDeps, principal: Principal, count: Count, now: Date): Authenticated {
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
  if (count.charged < count.operations) throw tooManyOperations(principal, count.operations, { budget, most: Math.min(limit, shared?.limit ?? limit) });
  return { principal, budget };
}

/**
 * The refusal of a request whose operations (a GraphQL document's mutations, an MCP batch's tool
 * calls) do not all fit in what is left of the tighter budget: nothing ran, and it cost one.
 */
function tooManyOperations(principal: Principal, operations: number, left: { budget: RateBudget; most: number }): BatonError {
  const { budget, most } = left;
  return new BatonError(
    'rate_limited',
    `This request carries ${operations} operations, each counted against the rate budget, but only ${budget.remaining + 1} of ${budget.limit} were left in this ${budget.windowS} s window (token ${principal.tokenId}); nothing ran, and it counted as one request.`,
    {
      hint:
        operations > most
          ? `Send at most ${most} operations per request (a whole window's budget): split the document or batch.`
        : `Send at most ${budget.remaining} operations now, or wait [[Retry-After]] seconds for the window to reset; the RateLimit header shows the budget left.`,
      headers: { 'retry-after': String(budget.resetS), ...rateLimitHeaders(budget) },
      extra: { operations, remaining: budget.remaining },
    },
  );
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
