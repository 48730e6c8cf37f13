import { BatonError } from '../../errors.ts';
import { lockAgent } from '../../store/agents.ts';
import type { Tx } from '../../store/connection.ts';
import type { Scope } from '../../domain/scopes.ts';
import type { Principal } from '../../domain/principal.ts';

export function agentNotFound(id: string): BatonError {
  return new BatonError('not_found', `No agent ${id}.`, { hint: '[[agents_list]] lists principals.' });
}

/**
 * Object-level rule: an agent principal reaches only its own record and tokens, whatever its
 * scopes; anything else is answered as absent, so ids cannot be probed. Humans reach all.
 */
export function assertAgentAccess(actor: Principal, agentId: string): void {
  if (actor.kind !== 'human' && actor.id !== agentId) throw agentNotFound(agentId);
}

/** Nobody grants what they do not hold: a principal or token gets only scopes the caller's token has. */
export function assertGrantable(actor: Principal, scopes: readonly string[]): void {
  const missing = scopes.filter((s) => !actor.scopes.has(s as Scope));
  if (missing.length === 0) return;
  throw new BatonError('forbidden_scope', `You cannot grant ${missing.join(', ')}: your token does not hold ${missing.length === 1 ? 'it' : 'them'}.`, {
    hint: 'Grant only scopes your own token has; a principal holding them must grant the rest.',
    extra: { required_scope: missing[0] },
  });
}

/** Whether the caller holds the owner role (its row locked until the write ends): only an owner makes an owner or changes one. */
export async function isOwner(tx: Tx, actor: Principal): Promise<boolean> {
  return (await lockAgent(tx, actor.id))?.role === 'owner';
}
