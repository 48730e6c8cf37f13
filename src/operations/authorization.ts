import type { Scope } from '../domain/scopes.ts';
import type { Principal } from '../domain/principal.ts';
import type { Operation } from './define-operation.ts';

/**
 * The form an operation name is compared in, in a toolAllowlist: dots read as underscores. Names
 * became portable in 0.2 (`tasks_create` is now `tasks_create`), and the dotted names stay
 * accepted as aliases in allowlists until 0.3 (spec/api.md, "Operation names").
 */
export function operationKey(name: string): string {
  return name.replaceAll('.', '_');
}

/** True when the allowlist (a set of `operationKey`s; null: no allowlist) admits the operation. */
export function allowlistAdmits(allowlist: ReadonlySet<string> | null, operation: string): boolean {
  return allowlist === null || allowlist.has(operationKey(operation));
}

/** True when the caller's token scopes and agent allowlist both admit the operation. */
export function mayCall(actor: Principal, operation: string, scope: Scope | null): boolean {
  if (scope === null) return true;
  return actor.scopes.has(scope) && allowlistAdmits(actor.toolAllowlist, operation);
}

/**
 * True when the caller may call the operation at all: `mayCall`, and a human-only operation is
 * never an agent's. What the manifest, tools/list and whoami offer (spec/api.md, "Scopes").
 */
export function mayInvoke(actor: Principal, operation: Pick<Operation, 'name' | 'scope' | 'humanOnly'>): boolean {
  if (operation.humanOnly === true && actor.kind !== 'human') return false;
  return mayCall(actor, operation.name, operation.scope);
}
