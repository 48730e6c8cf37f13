import { operationKey } from '../authorization.ts';
import type { Scope } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import type { Principal } from '../../domain/principal.ts';
import type { TokenGrant } from '../../store/tokens.ts';

/**
 * The principal a token grant stands for right now, or 401 `invalid_token` when the token is
 * unknown, revoked, expired or its agent disabled. Its scopes are the token's intersected with the agent's.
 */
export function principalFromGrant(grant: TokenGrant | undefined, now: Date): Principal {
  if (!grant) throw new BatonError('invalid_token', 'No such token.');
  if (grant.revoked_at && grant.revoked_at <= now) throw new BatonError('invalid_token', `Token ${grant.token_id} was revoked.`);
  if (grant.expires_at && grant.expires_at <= now) throw new BatonError('invalid_token', `Token ${grant.token_id} expired.`);
  if (grant.disabled) throw new BatonError('invalid_token', `Agent ${grant.agent_id} is disabled.`);
  const { scopes, toolAllowlist } = grantedSets(grant);
  return { id: grant.agent_id, kind: grant.agent_kind, workspaceId: grant.workspace_id, name: grant.agent_name, scopes, toolAllowlist, tokenId: grant.token_id, machine: grant.machine };
}

/** The token's scopes intersected with the agent's, and the agent's allowlist, as sets. */
function grantedSets(grant: TokenGrant): { scopes: ReadonlySet<Scope>; toolAllowlist: ReadonlySet<string> | null } {
  const agentScopes = new Set(grant.agent_scopes);
  return {
    scopes: new Set(grant.token_scopes.filter((s) => agentScopes.has(s)) as Scope[]),
    toolAllowlist: grant.tool_allowlist ? new Set(grant.tool_allowlist.map(operationKey)) : null,
  };
}
