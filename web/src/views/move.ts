import { useState } from 'preact/hooks';
import { ApiProblem, call, newKey, type Problem } from '../api.ts';
import type { Status, Task } from '../types.ts';

export interface FailedMove {
  task: Task;
  to: Status;
  problem: Problem;
  /** The key of the failed request: a retry of the same action reuses it. */
  key: string;
}

/**
 * Moving a task: PATCH with If-Match (the version the user saw) and one Idempotency-Key per
 * action. A refusal is kept as `failed` for the view to explain; on a version conflict the task
 * is re-read so a retry carries the current version. Resolves to the moved task, or null when it did not move.
 */
export function useMove(onTask: (task: Task) => void) {
  const [failed, setFailed] = useState<FailedMove | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const move = async (task: Task, to: Status, key = newKey()): Promise<Task | null> => {
    setBusy(task.id);
    setFailed(null);
    try {
      const moved = (await call('tasks_update', { id: task.id, status: to }, { key, ifMatch: task.version })) as Task;
      onTask(moved);
      return moved;
    } catch (error) {
      if (!(error instanceof ApiProblem)) throw error;
      let current = task;
      if (error.problem.code === 'conflict_version') {
        current = (await call('tasks_get', { id: task.id })) as Task;
        onTask(current);
      }
      setFailed({ task: current, to, problem: error.problem, key });
      return null;
    } finally {
      setBusy(null);
    }
  };
  return { move, failed, busy, dismiss: () => setFailed(null) };
}
