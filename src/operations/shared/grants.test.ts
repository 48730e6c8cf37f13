import { describe, expect, it } from 'vitest';
import type { TokenGrant } from '../../store/tokens.ts';
import { principalFromGrant } from './grants.ts';

const now = new Date('2026-11-24T12:00:00.000Z');

function grant(over: Partial<TokenGrant>): TokenGrant {
  return {
    token_id: 'tok_grants_test',
    machine: 'm',
    token_scopes: ['tasks:read', 'tasks:write', 'tasks:claim'],
    expires_at: null,
    revoked_at: null,
    agent_id: 'agt_1',
    agent_name: 'one',
    agent_kind: 'agent',
    agent_scopes: ['tasks:read', 'tasks:write'],
    tool_allowlist: null,
    disabled: false,
    rate_limit: null,
    workspace_id: 'wsp_00000000000000000000000000',
    token_created_by_kind: 'human',
    used: 1,
    workspace_rate_limit: null,
    workspace_used: null,
    charged: 1,
    ...over,
  };
}

describe('principalFromGrant', () => {
  it('grants the token scopes the agent also has', () => {
    expect([...principalFromGrant(grant({}), now).scopes]).toEqual(['tasks:read', 'tasks:write']);
  });

  // The sets are reused per token while its grant is unchanged; any change must show on the very next request.
  it('follows a change of the agent scopes, the token scopes or the allowlist at once', () => {
    expect([...principalFromGrant(grant({}), now).scopes]).toEqual(['tasks:read', 'tasks:write']);
    expect([...principalFromGrant(grant({ agent_scopes: ['tasks:read'] }), now).scopes]).toEqual(['tasks:read']);
    expect([...principalFromGrant(grant({ agent_scopes: ['tasks:read', 'tasks:claim'] }), now).scopes]).toEqual(['tasks:read', 'tasks:claim']);
    expect([...principalFromGrant(grant({ token_scopes: ['tasks:read'], agent_scopes: ['tasks:read', 'tasks:claim'] }), now).scopes]).toEqual(['tasks:read']);
    expect(principalFromGrant(grant({ tool_allowlist: ['tasks_get'] }), now).toolAllowlist).toEqual(new Set(['tasks_get']));
    expect(principalFromGrant(grant({ tool_allowlist: ['tasks_get', 'tasks_list'] }), now).toolAllowlist).toEqual(new Set(['tasks_get', 'tasks_list']));
    expect(principalFromGrant(grant({}), now).toolAllowlist).toBeNull();
  });

  it('refuses a revoked, expired or disabled grant whatever was built before', () => {
    principalFromGrant(grant({}), now);
    expect(() => principalFromGrant(grant({ revoked_at: now }), now)).toThrow(/revoked/);
    expect(() => principalFromGrant(grant({ expires_at: now }), now)).toThrow(/expired/);
    expect(() => principalFromGrant(grant({ disabled: true }), now)).toThrow(/disabled/);
  });
});
