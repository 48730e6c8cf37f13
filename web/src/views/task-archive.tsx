import { useAction } from '../action.ts';
import { call, newKey } from '../api.ts';
import { ProblemNotice } from '../components.tsx';
import { exact } from '../format.ts';
import type { Task } from '../types.ts';
import { type Inverse, useUndo } from '../undo.tsx';
import { archiveRequest } from './task-actions.ts';

/** Finished work, the only work that can be archived (the server refuses the rest with task_not_finished). */
export const isFinished = (task: Task): boolean => task.status === 'done' || task.status === 'cancelled';

/**
 * Archiving one task and back (`tasks_update` with `archived`, If-Match at the version shown),
 * offered for undo in the toast: the inverse is the same update the other way, at the version the
 * archive produced, with one Idempotency-Key for the toast. Resolves to the changed task, or null
 * when refused (`action.problem`).
 */
export function useArchive(onTask: (task: Task) => void) {
  const action = useAction();
  const showUndo = useUndo();
  const send = async (task: Task, archived: boolean): Promise<Task | null> => {
    let changed: Task | null = null;
    await action.send({ ...archiveRequest(task.id, archived), ifMatch: task.version }, (result) => {
      changed = result as Task;
      onTask(changed);
      showUndo(`${archived ? 'Archived' : 'Unarchived'} “${task.title}”.`, undoArchive(changed, onTask));
    });
    return changed;
  };
  return { action, send };
}

function undoArchive(after: Task, onTask: (task: Task) => void): Inverse {
  const key = newKey();
  return async () => onTask((await call('tasks_update', { id: after.id, archived: !after.archived_at }, { key, ifMatch: after.version })) as Task);
}

/** The task page's Archive card: on finished work, Archive; on archived work, when and Unarchive. */
export function ArchiveTask({ task, onChanged }: { task: Task; onChanged: (task: Task) => void }) {
  const { action, send } = useArchive(onChanged);
  if (!task.archived_at && !isFinished(task)) return null;
  return (
    <section class="card" data-testid="archive-card">
      <h2>Archive</h2>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {task.archived_at ? (
        <>
          <p>Archived {exact(task.archived_at)}: it is off the board and out of lists (the board’s “Show archived” brings it back).</p>
          <button type="button" class="button" disabled={action.busy} onClick={() => void send(task, false)}>
            Unarchive
          </button>
        </>
      ) : (
        <>
          <p class="muted">Take it off the board and out of lists; it stays readable here, and can be unarchived.</p>
          <button type="button" class="button" disabled={action.busy} onClick={() => void send(task, true)}>
            Archive task
          </button>
        </>
      )}
    </section>
  );
}
