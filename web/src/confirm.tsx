import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';

/** What a confirmation asks: a question, what follows from yes, and the words on the yes button. */
export interface Confirmation {
  title: string;
  body: string;
  /** "Delete task", "Cancel task": the action itself, never "OK". */
  confirm: string;
}

interface Pending extends Confirmation {
  resolve: (yes: boolean) => void;
}

/**
 * Asking before a destructive action (delete, cancel): `ask` opens a modal dialog and resolves
 * true on its confirm button, false on the other button, Escape or closing. Focus starts on the
 * safe choice, so Enter pressed by habit does nothing destructive. Render `dialog` once in the view.
 */
export function useConfirm() {
  const [pending, setPending] = useState<Pending | null>(null);
  const ref = useRef<HTMLDialogElement>(null);
  // Several views may each hold one (the task page and the command palette): ids of their own.
  const id = useId();
  useLayoutEffect(() => {
    const element = ref.current;
    if (!element) return;
    if (pending && !element.open) {
      element.showModal();
      element.querySelector<HTMLButtonElement>('.confirm-keep')?.focus();
    } else if (!pending && element.open) element.close();
  }, [pending]);
  const answer = (yes: boolean) => {
    pending?.resolve(yes);
    setPending(null);
  };
  const ask = (confirmation: Confirmation) => new Promise<boolean>((resolve) => setPending({ ...confirmation, resolve }));
  const dialog = (
    <dialog ref={ref} class="dialog confirm-dialog" role="alertdialog" aria-labelledby={`${id}-title`} aria-describedby={`${id}-body`} onClose={() => answer(false)}>
      <div class="dialog-form">
        <h2 id={`${id}-title`}>{pending?.title}</h2>
        <p id={`${id}-body`}>{pending?.body}</p>
        <div class="dialog-actions">
          <button type="button" class="button-danger" onClick={() => answer(true)}>
            {pending?.confirm}
          </button>
          <button type="button" class="confirm-keep" onClick={() => answer(false)}>
            Keep it
          </button>
        </div>
      </div>
    </dialog>
  );
  return { ask, dialog };
}
