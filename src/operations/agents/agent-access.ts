import { BatonError } from '../../errors.ts';
import type { Principal } from '../../service/principal.ts';

export function agentNotFound(id: string): BatonError {
  return new BatonError('not_found', `No agent ${id}.`, { hint: 'GET /api/v1/agents lists principals.' });
}

/**
 * Object-level rule: an agent principal reaches only its own record and tokens, whatever its
 * scopes; anything else is answered as absent, so ids cannot be probed. Humans reach all.
 */
export function assertAgentAccess(actor: Principal, agentId: string): void {
  if (actor.kind !== 'human' && actor.id !== agentId) throw agentNotFound(agentId);
}
