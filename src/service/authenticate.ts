import type { Kysely } from 'kysely';
import type { Scope } from '../domain/scopes.ts';
import { BatonError } from '../errors.ts';
import { findGrantByHash, type TokenGrant, touchToken } from '../store/tokens.ts';
import type { DB } from '../store/schema.ts';
import { hashToken, isWellFormedToken } from '../tokens.ts';
import type { Principal } from './principal.ts';

export interface Authenticator {
  /** Resolves `Authorization: Bearer …` to a principal, or throws 401 `unauthenticated` / `invalid_token`. */
  authenticate(authorization: string | undefined, now: Date): Promise<Principal>;
  /** Drops cached grants, so a revocation or scope change applies at once. */
  forget(): void;
}

/**
 * Token checks cost no query for malformed tokens (checksum) and at most one per token per
 * `cacheMs` for good ones; `forget()` empties the cache when grants change.
 */
export function createAuthenticator(db: Kysely<DB>, cacheMs: number): Authenticator {
  const cache = new Map<string, { grant: TokenGrant | undefined; until: number }>();
  return {
    async authenticate(authorization, now) {
      const token = bearer(authorization);
      const hash = hashToken(token);
      const cacheKey = hash.toString('base64');
      let entry = cache.get(cacheKey);
      if (!entry || entry.until <= now.getTime()) {
        entry = { grant: await findGrantByHash(db, hash), until: now.getTime() + cacheMs };
        if (cacheMs > 0) cache.set(cacheKey, entry);
      }
      const principal = toPrincipal(entry.grant, now);
      touchToken(db, principal.tokenId, now).catch(() => undefined);
      return principal;
    },
    forget: () => cache.clear(),
  };
}

function bearer(authorization: string | undefined): string {
  if (!authorization) throw new BatonError('unauthenticated', 'No Authorization header was sent.');
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(authorization);
  if (!match?.[1]) throw new BatonError('unauthenticated', 'The Authorization header is not of the form `Bearer <token>`.');
  if (!isWellFormedToken(match[1])) {
    throw new BatonError('invalid_token', 'The bearer token is not a Baton token (bad shape or checksum); it was refused without a lookup.');
  }
  return match[1];
}

function toPrincipal(grant: TokenGrant | undefined, now: Date): Principal {
  if (!grant) throw new BatonError('invalid_token', 'No such token.');
  if (grant.revoked_at) throw new BatonError('invalid_token', `Token ${grant.token_id} was revoked.`);
  if (grant.expires_at && grant.expires_at <= now) throw new BatonError('invalid_token', `Token ${grant.token_id} expired.`);
  if (grant.disabled) throw new BatonError('invalid_token', `Agent ${grant.agent_id} is disabled.`);
  const agentScopes = new Set(grant.agent_scopes);
  return {
    id: grant.agent_id,
    kind: grant.agent_kind,
    name: grant.agent_name,
    scopes: new Set(grant.token_scopes.filter((s) => agentScopes.has(s)) as Scope[]),
    toolAllowlist: grant.tool_allowlist ? new Set(grant.tool_allowlist) : null,
    tokenId: grant.token_id,
    machine: grant.machine,
  };
}
