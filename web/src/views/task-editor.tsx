import { useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { call } from '../api.ts';
import { ProblemNotice } from '../components.tsx';
import type { Task } from '../types.ts';
import { bodyOf, draftOf, type TaskDraft, TaskFields } from './task-fields.tsx';

type Body = ReturnType<typeof bodyOf>;
const FIELD_LABEL: Record<keyof Body, string> = { title: 'Title', description: 'Description', priority: 'Priority', labels: 'Labels', blocked_by: 'Blocked by' };

/** The fields the user changed from `base`, as a PATCH body (only those, so other changes are not overwritten). */
function changedFields(base: Task, draft: TaskDraft): Partial<Body> {
  const before = bodyOf(draftOf(base));
  const after = bodyOf(draft);
  const changed: Partial<Body> = {};
  for (const key of Object.keys(after) as (keyof Body)[]) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) Object.assign(changed, { [key]: after[key] });
  }
  return changed;
}

const shown = (value: unknown) => (Array.isArray(value) ? value.join(', ') || '(none)' : String(value) || '(empty)');

/** Both versions of each field the user changed, side by side, after a version conflict. */
function ConflictView({ theirs, mine }: { theirs: Task; mine: Partial<Body> }) {
  const current = bodyOf(draftOf(theirs));
  return (
    <div class="conflict" data-testid="conflict">
      {(Object.keys(mine) as (keyof Body)[]).map((field) => (
        <div key={field} class="conflict-field">
          <h3>{FIELD_LABEL[field]}</h3>
          <div class="conflict-sides">
            <div>
              <p class="conflict-label">Now on the server (version {theirs.version})</p>
              <pre class="conflict-text" data-side="theirs">{shown(current[field])}</pre>
            </div>
            <div>
              <p class="conflict-label">Yours (kept in the form below)</p>
              <pre class="conflict-text" data-side="mine">{shown(mine[field])}</pre>
            </div>
          </div>
        </div>
      ))}
    </div>
  );
}

/**
 * Inline edit of a task, sent with If-Match: the version the edit started from. On a version
 * conflict nothing is lost: the form keeps the user's text, both versions are shown, and the next
 * save is checked against the version now on the server.
 */
export function TaskEditor({ task, onSaved, onCancel }: { task: Task; onSaved: (task: Task) => void; onCancel: () => void }) {
  const [base, setBase] = useState(task);
  const [draft, setDraft] = useState(() => draftOf(task));
  const [conflict, setConflict] = useState<{ theirs: Task; mine: Partial<Body> } | null>(null);
  const { busy, problem, dismiss, send } = useAction();

  const save = async (event: Event) => {
    event.preventDefault();
    const body = changedFields(base, draft);
    if (Object.keys(body).length === 0) return onCancel();
    const failed = await send({ operation: 'tasks_update', input: { id: task.id, ...body }, ifMatch: base.version }, (saved) => onSaved(saved as Task));
    if (failed?.code === 'conflict_version') {
      const theirs = (await call('tasks_get', { id: task.id, view: 'full' })) as Task;
      setConflict({ theirs, mine: body });
      setBase(theirs);
    }
  };
  const useTheirs = () => {
    if (!conflict) return;
    setDraft(draftOf(conflict.theirs));
    setConflict(null);
    dismiss();
  };

  return (
    <form class="task-editor" aria-label="Edit task" onSubmit={(e) => void save(e)}>
      {conflict ? (
        <div class="notice notice-problem" role="alert">
          <div class="notice-body">
            <strong class="notice-title">Someone else changed this task while you were editing</strong>
            <p>
              Your edit was not saved. Compare the two versions, adjust the form if you like, then save again: it will replace version {conflict.theirs.version}. Or take
              theirs and drop your changes.
            </p>
            <ConflictView theirs={conflict.theirs} mine={conflict.mine} />
            <div class="notice-actions">
              <button type="button" onClick={useTheirs}>
                Use theirs (discard my changes)
              </button>
            </div>
          </div>
        </div>
      ) : (
        problem && <ProblemNotice problem={problem} onDismiss={dismiss} />
      )}
      <TaskFields prefix="edit" draft={draft} onChange={setDraft} taskId={task.id} />
      <div class="dialog-actions">
        <button type="submit" class="button-primary" disabled={busy || !draft.title.trim()}>
          {conflict ? 'Save mine over theirs' : 'Save'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
