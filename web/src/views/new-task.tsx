import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { ProblemNotice } from '../components.tsx';
import { call } from '../api.ts';
import { TemplateField, type TemplateChoice } from './new-task-template.tsx';
import { paramsOf } from './templates.tsx';
import type { Task } from '../types.ts';
import { type Extras, extrasBody, NewTaskExtras, NO_EXTRAS } from './new-task-extras.tsx';
import { bodyOf, EMPTY_DRAFT, type TaskDraft, TaskFields } from './task-fields.tsx';

/**
 * "New task" in a modal dialog. It opens with the title focused, so a title typed at once lands
 * there (keys typed in the dialog never reach the page's shortcuts); Ctrl/Cmd+Enter creates the
 * task from any field. Every field (priority, labels, blockers, assignee, parent, due, not before)
 * is a native control or a button, reached with Tab in that order, then the template: picking one
 * swaps the fields for its parameters, and Create makes its tasks (`templates_instantiate`). A retried submit of the same fields keeps its Idempotency-Key, so it cannot
 * create two tasks; a refusal keeps everything typed and says what to fix.
 */
export function NewTaskDialog({ open, onClose, onCreated }: { open: boolean; onClose: () => void; onCreated: (task: Task) => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const form = useRef<HTMLFormElement>(null);
  const [draft, setDraft] = useState<TaskDraft>(EMPTY_DRAFT);
  const [extras, setExtras] = useState<Extras>(NO_EXTRAS);
  const [template, setTemplate] = useState<TemplateChoice | null>(null);
  const action = useAction();
  // In the same commit as the dialog opens (not after paint, when showModal would have focused Close), so a key pressed at once lands in the title.
  useLayoutEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setDraft(EMPTY_DRAFT);
      setExtras(NO_EXTRAS);
      setTemplate(null);
      action.dismiss();
      element.showModal();
      element.querySelector<HTMLInputElement>('#new-task-title')?.focus();
    } else if (!open && element.open) element.close();
  }, [open]);

  const ready = !action.busy && (template !== null || draft.title.trim() !== '');
  const submit = async (event: Event) => {
    event.preventDefault();
    if (!ready) return;
    if (template) {
      // The whole graph at once; the notice links the first task made.
      const input = { id: template.template.id, params: paramsOf(template.values) };
      await action.send({ operation: 'templates_instantiate', input }, async (made) => {
        const first = made.tasks.find((t) => t.id)?.id;
        if (first) onCreated((await call('tasks_get', { id: first })) as Task);
      });
      return;
    }
    await action.send({ operation: 'tasks_create', input: { ...bodyOf(draft), ...extrasBody(extras) } }, (task) => onCreated(task as Task));
  };
  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="new-task-heading" onClose={onClose}>
      <form
        ref={form}
        class="dialog-form"
        onSubmit={(e) => void submit(e)}
        onKeyDown={(e) => {
          if (e.key !== 'Enter' || !(e.ctrlKey || e.metaKey)) return;
          e.preventDefault();
          form.current?.requestSubmit();
        }}
      >
        <div class="dialog-head">
          <h2 id="new-task-heading">New task</h2>
          <button type="button" class="button-quiet" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </div>
        {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
        {open && !template && <TaskFields prefix="new-task" draft={draft} onChange={setDraft} />}
        {open && !template && <NewTaskExtras extras={extras} onChange={setExtras} />}
        {open && <TemplateField choice={template} onChange={setTemplate} />}
        <div class="dialog-actions">
          <button type="submit" class="button-primary" disabled={!ready} aria-keyshortcuts="Control+Enter Meta+Enter" title="Create task (Ctrl+Enter)">
            {template ? `Create ${template.template.tasks.length} tasks` : 'Create task'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
