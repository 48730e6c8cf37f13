import { BatonError } from '../errors.ts';
import { type Operation, pathParameters } from '../operations/define-operation.ts';
import { authorize, validate } from './admit.ts';
import { type Call, type ExecuteDeps, execute, type Outcome, readContext, reported, success } from './execute.ts';

/**
 * Runs one read for many resources named by its single path parameter, with the same
 * authorization and validation as `execute`. Uses the operation's `runBatch` (a fixed number of
 * queries) when it has one, else one `execute` per id. Answers in `ids` order, each an outcome or
 * the error that id alone got; throws when the call as a whole is refused (scope, allowlist).
 */
export async function executeBatch(
  deps: ExecuteDeps,
  operation: Operation,
  input: Record<string, unknown>,
  ids: readonly string[],
  call: Call,
): Promise<(Outcome | BatonError)[]> {
  const [param, ...others] = pathParameters(operation.http.path);
  if (operation.kind !== 'read' || param === undefined || others.length > 0) {
    throw new Error(`${operation.name} is not a read with one path parameter`);
  }
  if (!operation.runBatch) {
    return Promise.all(ids.map((id) => execute(deps, operation, { ...input, [param]: id }, call).catch((error: unknown) => toError(error))));
  }
  authorize(operation, call.principal);
  const inputs = ids.map((id): Record<string, unknown> | BatonError => {
    try {
      return validate(operation, { ...input, [param]: id }, deps.config);
    } catch (error) {
      return toError(error);
    }
  });
  const valid = inputs.filter((i): i is Record<string, unknown> => !(i instanceof BatonError));
  const first = valid[0];
  if (first === undefined) return inputs as BatonError[];
  const ctx = readContext(deps, operation, call);
  const outputs = await ctx
    .inWorkspace((db) => operation.runBatch!(db, ctx, first, valid.map((i) => String(i[param]))))
    .catch((error: unknown) => {
      throw reported(deps, operation, error, call.requestId);
    });
  let next = 0;
  return inputs.map((i) => {
    if (i instanceof BatonError) return i;
    const output = outputs[next++];
    return output instanceof BatonError ? output : success(operation, output, false);
  });
}

function toError(error: unknown): BatonError {
  if (error instanceof BatonError) return error;
  throw error;
}
