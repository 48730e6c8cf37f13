import type { PrincipalKind, Scope } from './scopes.ts';

/** The authenticated caller of one request: an agent or human, through one token. */
export interface Principal {
  readonly id: string;
  readonly kind: PrincipalKind;
  /** The workspace the principal (and so each of its calls) belongs to. */
  readonly workspaceId: string;
  readonly name: string;
  /** The token's scopes intersected with its agent's: what this token may do. */
  readonly scopes: ReadonlySet<Scope>;
  /** The operations this agent may call, as `operationKey`s (so dotted aliases match); null means any its scopes allow. */
  readonly toolAllowlist: ReadonlySet<string> | null;
  readonly tokenId: string;
  readonly machine: string;
  /** The cookie session this request came with (`ses_…`); absent for a bearer token. */
  readonly sessionId?: string;
}
