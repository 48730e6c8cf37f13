import { useAction } from '../action.ts';
import { ProblemNotice } from '../components.tsx';
import type { Confirmation } from '../confirm.tsx';
import { navigate } from '../router.ts';
import type { Approval, Task } from '../types.ts';
import { useUndo } from '../undo.tsx';
import { useState } from 'preact/hooks';

/**
 * Deleting a task (`tasks_delete`, the API's one destructive task operation; archiving, which
 * keeps it, is `task-archive.tsx`),
 * asked first. DELETE with If-Match at the version shown, so a task changed meanwhile is not
 * deleted unseen. A human who decides approvals deletes at once and lands on the board with a
 * toast saying it cannot be undone; anyone else gets a pending approval, linked.
 */
export function useDeleteTask(ask: (confirmation: Confirmation) => Promise<boolean>) {
  const action = useAction();
  const showUndo = useUndo();
  const [pending, setPending] = useState<Approval | null>(null);
  /** Resolves to true once it is deleted; false when kept, refused (`action.problem`) or waiting for approval (`pending`). */
  const remove = async (task: Task): Promise<boolean> => {
    const yes = await ask({
      title: `Delete “${task.title}”?`,
      body: 'It leaves the board, lists and search, and any lease on it ends; its history stays in the activity log. A deleted task cannot be restored.',
      confirm: 'Delete task',
    });
    if (!yes) return false;
    let deleted = false;
    await action.send({ operation: 'tasks_delete', input: { id: task.id }, ifMatch: task.version }, (result) => {
      // A delete that waits for a human's approval answers 202 with the approval.
      if ('operation' in result) {
        setPending(result);
        return;
      }
      deleted = true;
      navigate('/');
      showUndo(`Deleted “${task.title}”.`, 'A deleted task cannot be restored.');
    });
    return deleted;
  };
  return { action, pending, remove };
}

/** The task page's Delete card (see `useDeleteTask`). */
export function DeleteTask({ task, ask }: { task: Task; ask: (confirmation: Confirmation) => Promise<boolean> }) {
  const { action, pending, remove } = useDeleteTask(ask);
  return (
    <section class="card">
      <h2>Delete</h2>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {pending ? (
        <p role="status">
          Deleting it waits for a human’s approval: <a href="/approvals">Approvals</a>.
        </p>
      ) : (
        <button type="button" class="button-danger" disabled={action.busy} onClick={() => void remove(task)}>
          Delete task…
        </button>
      )}
    </section>
  );
}
