import type { Scope } from '../domain/scopes.ts';
import type { Principal } from '../domain/principal.ts';

/** True when the caller's token scopes and agent allowlist both admit the operation. */
export function mayCall(actor: Principal, operation: string, scope: Scope | null): boolean {
  if (scope === null) return true;
  return actor.scopes.has(scope) && (actor.toolAllowlist === null || actor.toolAllowlist.has(operation));
}
