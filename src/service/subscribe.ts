import type { Kysely } from 'kysely';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import type { EventTail, Operation, StreamOperation } from '../operations/define-operation.ts';
import { principalFromGrant } from '../operations/shared/grants.ts';
import type { DB } from '../store/schema.ts';
import { findGrantById } from '../store/tokens.ts';
import { authorize, validate } from './execute.ts';
import { workspaceTail } from './event-tail.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import type { Principal } from '../domain/principal.ts';

/** How often an open stream re-checks its token: a revoked token, disabled agent or lost scope ends it. */
const RECHECK_MS = 5000;

/** Who subscribes, and the signal that ends the subscription (the client went away). */
export interface StreamCall {
  readonly principal: Principal;
  readonly signal: AbortSignal;
}

/**
 * Opens a stream operation for one caller: authorizes (scope, toolAllowlist) and validates the input,
 * then lets the operation check its start; all of that throws `BatonError` before the first item.
 * Items then come in order until `call.signal` aborts, the server closes, or the caller's authority
 * lapses (checked every 5 s: the stream just ends, and the reconnect is refused with 401/403).
 */
export async function subscribe(
  deps: { db: Kysely<DB>; config: Config; clock: Clock; tail: EventTail },
  operation: Operation,
  call: StreamCall & { readonly input: unknown },
): Promise<AsyncIterable<unknown>> {
  if (operation.kind !== 'stream') throw new BatonError('method_not_allowed', `${operation.name} is not a stream.`);
  authorize(operation, call.principal);
  const input = validate(operation, call.input, deps.config);
  const stop = new AbortController();
  const signal = AbortSignal.any([call.signal, stop.signal]);
  const recheck = setInterval(() => {
    findGrantById(deps.db, call.principal.tokenId)
      .then((grant) => authorize(operation, principalFromGrant(grant, deps.clock.now())))
      .catch((error: unknown) => {
        if (error instanceof BatonError) stop.abort();
      });
  }, RECHECK_MS);
  signal.addEventListener('abort', () => clearInterval(recheck), { once: true });
  const stream: StreamOperation<typeof operation.input, typeof operation.output> = operation;
  try {
    // Where the stream starts is read in the caller's workspace; what it then follows is that workspace's events only.
    const ctx = { actor: call.principal, config: deps.config, tail: workspaceTail(deps.tail, call.principal.workspaceId), signal };
    return await inWorkspace(deps.db, call.principal.workspaceId, (tx) => stream.open(tx, ctx, input));
  } catch (error) {
    stop.abort();
    throw error;
  }
}
