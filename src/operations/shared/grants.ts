import { operationKey } from '../authorization.ts';
import type { Scope } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import type { Principal } from '../../service/principal.ts';
import type { TokenGrant } from '../../store/tokens.ts';

/**
 * The principal a token grant stands for right now, or 401 `invalid_token` when the token is
 * unknown, revoked, expired or its agent disabled. Its scopes are the token's intersected with the agent's.
 */
export function principalFromGrant(grant: TokenGrant | undefined, now: Date): Principal {
  if (!grant) throw new BatonError('invalid_token', 'No such token.');
  if (grant.revoked_at) throw new BatonError('invalid_token', `Token ${grant.token_id} was revoked.`);
  if (grant.expires_at && grant.expires_at <= now) throw new BatonError('invalid_token', `Token ${grant.token_id} expired.`);
  if (grant.disabled) throw new BatonError('invalid_token', `Agent ${grant.agent_id} is disabled.`);
  const { scopes, toolAllowlist } = grantedSets(grant);
  return { id: grant.agent_id, kind: grant.agent_kind, name: grant.agent_name, scopes, toolAllowlist, tokenId: grant.token_id, machine: grant.machine };
}

interface GrantedSets {
  readonly tokenScopes: readonly string[];
  readonly agentScopes: readonly string[];
  readonly allowlist: readonly string[] | null;
  readonly scopes: ReadonlySet<Scope>;
  readonly toolAllowlist: ReadonlySet<string> | null;
}

/** Per token, the sets last built from its grant: every request reads the grant afresh, and it rarely changes. */
const setsByToken = new Map<string, GrantedSets>();

/**
 * The token's scopes intersected with the agent's, and the agent's allowlist, as sets. They are
 * rebuilt whenever the grant's arrays differ from the ones they were built from, so a change of
 * scopes or allowlist applies to the next request, as it would without the reuse.
 */
function grantedSets(grant: TokenGrant): GrantedSets {
  const last = setsByToken.get(grant.token_id);
  if (last && sameStrings(last.tokenScopes, grant.token_scopes) && sameStrings(last.agentScopes, grant.agent_scopes) && sameStrings(last.allowlist, grant.tool_allowlist)) {
    return last;
  }
  const agentScopes = new Set(grant.agent_scopes);
  const sets: GrantedSets = {
    tokenScopes: grant.token_scopes,
    agentScopes: grant.agent_scopes,
    allowlist: grant.tool_allowlist,
    scopes: new Set(grant.token_scopes.filter((s) => agentScopes.has(s)) as Scope[]),
    toolAllowlist: grant.tool_allowlist ? new Set(grant.tool_allowlist.map(operationKey)) : null,
  };
  if (setsByToken.size >= 10_000) setsByToken.clear();
  setsByToken.set(grant.token_id, sets);
  return sets;
}

function sameStrings(a: readonly string[] | null, b: readonly string[] | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
