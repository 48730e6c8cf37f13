import { useState } from 'preact/hooks';
import type { CallName, InputOf, OutputOf } from '../../src/client/index.ts';
import { ActionKey, call, type Problem, problemOf } from './api.ts';

/** One write: the operation, its typed input, and the version the user saw (If-Match); the action chooses the key. */
export interface WriteRequest<N extends CallName> {
  operation: N;
  input: InputOf<N>;
  ifMatch?: number;
}

/** A write of any operation (what a bulk action or an undo holds before sending it). */
export type AnyWrite = { [N in CallName]: WriteRequest<N> }[CallName];

/**
 * One form's writes: whether one is running, the problem the last one met, and `send`, which
 * gives each write its Idempotency-Key by `ActionKey`'s rule (a retry of the same request after a
 * lost answer keeps the key; an edited request, or one after a refusal, gets a new one).
 */
export function useAction() {
  const [keys] = useState(() => new ActionKey());
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  /**
   * Sends one write and runs `then` with its answer; a failure of either is shown as `problem`.
   * Resolves to that problem, or null when all went well.
   */
  const send = async <N extends CallName>(request: WriteRequest<N>, then?: (result: OutputOf<N>) => void | Promise<void>): Promise<Problem | null> => {
    const { operation, input, ifMatch } = request;
    setBusy(true);
    setProblem(null);
    let answered = false;
    try {
      const result = await call(operation, input, { key: keys.for({ operation, input }), ...(ifMatch === undefined ? {} : { ifMatch }) });
      answered = true;
      keys.settle();
      await then?.(result);
      return null;
    } catch (error) {
      if (!answered) keys.settle(error);
      const failure = problemOf(error);
      setProblem(failure);
      return failure;
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, dismiss: () => setProblem(null), send };
}
