import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import { BatonError } from '../errors.ts';
import type { EventTail, Operation, StreamOperation } from '../operations/define-operation.ts';
import type { DB } from '../store/schema.ts';
import { authorize, validate } from './execute.ts';
import type { Principal } from './principal.ts';

/** Who subscribes, and the signal that ends the subscription (the client went away). */
export interface StreamCall {
  readonly principal: Principal;
  readonly signal: AbortSignal;
}

/**
 * Opens a stream operation for one caller: authorizes (scope, toolAllowlist) and validates the input,
 * then lets the operation check its start; all of that throws `BatonError` before the first item.
 * Items then come in order until `call.signal` aborts or the server closes.
 */
export async function subscribe(
  deps: { db: Kysely<DB>; config: Config; tail: EventTail },
  operation: Operation,
  call: StreamCall & { readonly input: unknown },
): Promise<AsyncIterable<unknown>> {
  if (operation.kind !== 'stream') throw new BatonError('method_not_allowed', `${operation.name} is not a stream.`);
  authorize(operation, call.principal);
  const input = validate(operation, call.input);
  const stream: StreamOperation<typeof operation.input, typeof operation.output> = operation;
  return stream.open(deps.db, { actor: call.principal, config: deps.config, tail: deps.tail, signal: call.signal }, input);
}
