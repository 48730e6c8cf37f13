import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem, newKey, type Problem, write } from '../api.ts';
import { ProblemNotice } from '../components.tsx';
import type { Task } from '../types.ts';
import { bodyOf, EMPTY_DRAFT, type TaskDraft, TaskFields } from './task-fields.tsx';

/**
 * "New task" in a modal dialog. One Idempotency-Key per opening: a retried submit cannot create two
 * tasks. A refusal keeps everything typed and says what to fix.
 */
export function NewTaskDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (task: Task) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [draft, setDraft] = useState<TaskDraft>(EMPTY_DRAFT);
  const [key, setKey] = useState(newKey);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setDraft(EMPTY_DRAFT);
      setKey(newKey());
      setProblem(null);
      element.showModal();
    } else if (!open && element.open) element.close();
  }, [open]);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setProblem(null);
    try {
      onCreated(await write<Task>('POST', '/tasks', { key, body: bodyOf(draft) }));
    } catch (error) {
      if (error instanceof ApiProblem) setProblem(error.problem);
    } finally {
      setBusy(false);
    }
  };
  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="new-task-heading" onClose={onClose}>
      <form class="dialog-form" onSubmit={(e) => void submit(e)}>
        <div class="dialog-head">
          <h2 id="new-task-heading">New task</h2>
          <button type="button" class="button-quiet" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </div>
        {problem && <ProblemNotice problem={problem} onDismiss={() => setProblem(null)} />}
        {open && <TaskFields key={key} prefix="new-task" draft={draft} onChange={setDraft} />}
        <div class="dialog-actions">
          <button type="submit" class="button-primary" disabled={busy || !draft.title.trim()}>
            Create task
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
