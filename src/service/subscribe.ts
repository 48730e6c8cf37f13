import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import type { Operation, StreamOperation } from '../operations/define-operation.ts';
import { principalFromGrant } from '../operations/shared/grants.ts';
import type { DB } from '../store/schema.ts';
import type { StreamGrants } from './stream-grants.ts';
import { authorize, validate } from './admit.ts';
import type { InstanceTail } from './event-tail.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import type { Principal } from '../domain/principal.ts';

/** Who subscribes, and the controller that ends the subscription. */
export interface StreamCall {
  readonly principal: Principal;
  /**
   * Ends the subscription when aborted: by the caller (the client went away), or by `subscribe` when
   * the caller's authority lapses. The caller's own, not a second controller per stream.
   */
  readonly stop: AbortController;
}

/**
 * Opens a stream operation for one caller: authorizes (scope, toolAllowlist) and validates the input,
 * then lets the operation check its start; all of that throws `BatonError` before the first item.
 * Items then come in order until `call.stop` aborts, the server closes, or the caller's authority
 * lapses (checked every 5 s by `grants`, one read for all the instance's streams: the stream just ends,
 * and the reconnect is refused with 401/403).
 */
export async function subscribe(
  deps: { db: Kysely<DB>; config: Config; tail: InstanceTail; grants: StreamGrants },
  operation: Operation,
  call: StreamCall & { readonly input: unknown },
): Promise<AsyncIterable<unknown>> {
  if (operation.kind !== 'stream') throw new BatonError('method_not_allowed', `${operation.name} is not a stream.`);
  authorize(operation, call.principal);
  const input = validate(operation, call.input, deps.config);
  const { stop } = call;
  const { signal } = stop;
  const unwatch = deps.grants.watch(call.principal.tokenId, (grant, now) => {
    try {
      authorize(operation, principalFromGrant(grant, now));
    } catch (error) {
      if (error instanceof BatonError) stop.abort();
    }
  });
  if (signal.aborted) unwatch();
  else signal.addEventListener('abort', unwatch, { once: true });
  const stream: StreamOperation<typeof operation.input, typeof operation.output> = operation;
  try {
    // Where the stream starts is read in the caller's workspace; what it then follows is that workspace's events only.
    const ctx = { actor: call.principal, config: deps.config, tail: deps.tail.inWorkspace(call.principal.workspaceId), signal };
    return await inWorkspace(deps.db, call.principal.workspaceId, (tx) => stream.open(tx, ctx, input));
  } catch (error) {
    signal.removeEventListener('abort', unwatch);
    unwatch();
    throw error;
  }
}
