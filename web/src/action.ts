import { useState } from 'preact/hooks';
import { ActionKey, type Problem, problemOf, write, type WriteOptions } from './api.ts';

/** One write: what `write` takes, less the key, which the action chooses. */
export interface ActionRequest extends Omit<WriteOptions, 'key'> {
  method: 'POST' | 'PATCH' | 'DELETE';
  path: string;
}

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
  const send = async <T>(request: ActionRequest, then?: (result: T) => void | Promise<void>): Promise<Problem | null> => {
    const { method, path, ...options } = request;
    setBusy(true);
    setProblem(null);
    let answered = false;
    try {
      const result = await write<T>(method, path, { ...options, key: keys.for({ method, path, body: options.body }) });
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
