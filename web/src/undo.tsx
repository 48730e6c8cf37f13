import { type ComponentChildren, createContext } from 'preact';
import { useContext, useEffect, useState } from 'preact/hooks';
import { problemOf } from './api.ts';
import { useShortcuts } from './hooks.ts';

/** How long a toast offers its undo: long enough to read it and reach the button. */
const UNDO_MS = 10_000;

/**
 * The inverse of what was just done: a function that sends the inverse operation (throwing, as
 * `write` does, when it is refused), or, when there is none, a sentence saying why it cannot be undone.
 */
export type Inverse = (() => Promise<void>) | string;

/** Shows `label` ("Moved “X” to Done.") in the undo toast, replacing any toast before it. */
export type ShowUndo = (label: string, inverse: Inverse) => void;

const UndoContext = createContext<ShowUndo | null>(null);

/** `showUndo(label, inverse)`, for any view inside the signed-in shell (moves, bulk actions, deletes). */
export function useUndo(): ShowUndo {
  const show = useContext(UndoContext);
  if (!show) throw new Error('useUndo outside UndoHost');
  return show;
}

interface Toast {
  /** Tells one toast from the one that replaces it, so an old timer never closes a new toast. */
  n: number;
  label: string;
  inverse: Inverse;
  state: 'offered' | 'undoing' | 'undone' | 'refused';
  /** Why the inverse was refused (the server's words). */
  why?: string;
}

/**
 * Provides `showUndo` and shows its toast: the label and an Undo button (`z` presses it) for
 * ~10 s, then it goes. The countdown pauses while the pointer or focus is in the toast, so nobody
 * is rushed (WCAG 2.2.1). Undo runs the inverse once; what came of it (undone, or why not) stays
 * shown for another 10 s. A toast whose inverse is a sentence shows the sentence instead of a button.
 */
export function UndoHost({ children }: { children: ComponentChildren }) {
  const [toast, setToast] = useState<Toast | null>(null);
  // Pointed at and focused are two holds: leaving with the pointer keeps a toast that still has focus.
  const [hovered, setHovered] = useState(false);
  const [focused, setFocused] = useState(false);
  const held = hovered || focused;
  const show: ShowUndo = (label, inverse) => {
    // A hold belongs to the toast it was on (a removed toast's focus leaves no focusout behind).
    setHovered(false);
    setFocused(false);
    setToast((t) => ({ n: (t?.n ?? 0) + 1, label, inverse, state: 'offered' }));
  };
  // Restarts with each new toast or state, and whenever the hold ends; a held toast never times out.
  useEffect(() => {
    if (!toast || held || toast.state === 'undoing') return;
    const timer = setTimeout(() => setToast((t) => (t?.n === toast.n ? null : t)), UNDO_MS);
    return () => clearTimeout(timer);
  }, [toast?.n, toast?.state, held]);

  const undo = async () => {
    if (!toast || toast.state !== 'offered' || typeof toast.inverse === 'string') return;
    const { n, inverse } = toast;
    const settle = (change: Partial<Toast>) => setToast((t) => (t?.n === n ? { ...t, ...change } : t));
    settle({ state: 'undoing' });
    try {
      await inverse();
      settle({ state: 'undone' });
    } catch (error) {
      const problem = problemOf(error);
      settle({ state: 'refused', why: [problem.detail ?? problem.title, problem.hint].filter(Boolean).join(' ') });
    }
  };
  useShortcuts({
    z: (event) => {
      if (!toast || toast.state !== 'offered' || typeof toast.inverse === 'string') return;
      event.preventDefault();
      void undo();
    },
  });

  return (
    <UndoContext.Provider value={show}>
      {children}
      <div class="undo-region" aria-live="polite" onMouseEnter={() => setHovered(true)} onMouseLeave={() => setHovered(false)} onFocusIn={() => setFocused(true)} onFocusOut={() => setFocused(false)}>
        {toast && (
          <div class={`undo-toast undo-${toast.state}`} data-undo={toast.state}>
            <p class="undo-text">
              {toast.state === 'undone' ? `Undone: ${toast.label}` : toast.label}
              {toast.state === 'offered' && typeof toast.inverse === 'string' && <span class="undo-why"> {toast.inverse}</span>}
              {toast.state === 'refused' && <span class="undo-why"> Could not undo it: {toast.why}</span>}
            </p>
            {typeof toast.inverse !== 'string' && (toast.state === 'offered' || toast.state === 'undoing') && (
              <button type="button" class="button-primary undo-button" aria-keyshortcuts="z" disabled={toast.state === 'undoing'} onClick={() => void undo()}>
                {toast.state === 'undoing' ? 'Undoing…' : 'Undo'}
              </button>
            )}
            <button type="button" class="button-quiet" aria-label="Dismiss" onClick={() => setToast(null)}>
              ✕
            </button>
          </div>
        )}
      </div>
    </UndoContext.Provider>
  );
}
