import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { TaskSuggestions, useTaskSearch } from './task-fields.tsx';
import { PrincipalPicker } from '../principal-picker.tsx';

/** The fields only "New task" sets: who it is for, its parent, when it is due, not before when, its attempts. Dates as `datetime-local` values. */
export interface Extras {
  assignee: string;
  parent: { id: string; title: string } | null;
  due_at: string;
  not_before: string;
  /** Attempts it gets before it leaves the queue, 1–100; empty: the server's default. */
  max_attempts: string;
}

export const NO_EXTRAS: Extras = { assignee: '', parent: null, due_at: '', not_before: '', max_attempts: '' };

/** The members of a create request the extras set; local date-times become instants in the browser's zone. */
export function extrasBody(extras: Extras): Record<string, string | number> {
  const instant = (local: string) => new Date(local).toISOString();
  return {
    ...(extras.assignee ? { assignee: extras.assignee } : {}),
    ...(extras.parent ? { parent_id: extras.parent.id } : {}),
    ...(extras.due_at ? { due_at: instant(extras.due_at) } : {}),
    ...(extras.not_before ? { not_before: instant(extras.not_before) } : {}),
    ...(extras.max_attempts ? { max_attempts: Number(extras.max_attempts) } : {}),
  };
}

/** How many attempts a task gets before it leaves the queue (dead letter): empty for the server's default. */
export function AttemptsField({ id, value, onChange }: { id: string; value: string; onChange: (value: string) => void }) {
  return (
    <div class="field">
      <label for={id}>Attempts</label>
      <input id={id} type="number" min={1} max={100} step={1} inputMode="numeric" placeholder="default" aria-describedby={`${id}-help`} value={value} onInput={(e) => onChange(e.currentTarget.value)} />
      <span id={`${id}-help`} class="muted small">
        Before it leaves the queue; empty: the server's default.
      </span>
    </div>
  );
}

/** The parent, found by a server search of titles (the best 8); Tab reaches each match, Enter picks it. */
function ParentPicker({ value, onChange }: { value: Extras['parent']; onChange: (parent: Extras['parent']) => void }) {
  const [query, setQuery] = useState('');
  const remove = useRef<HTMLButtonElement>(null);
  const chosen = useRef(false);
  const q = query.trim();
  const found = useTaskSearch(q);
  // Focus moves to the chosen parent's Remove in the same commit as it appears (not a frame later,
  // when the user may already have tabbed on and be typing a date).
  useLayoutEffect(() => {
    if (value && chosen.current) remove.current?.focus();
    chosen.current = false;
  }, [value]);
  if (value) {
    return (
      <div class="field">
        <span class="field-name">Parent</span>
        <p class="chip" data-testid="chosen-parent">
          <span>{value.title}</span>
          <button ref={remove} type="button" class="button-quiet chip-remove" aria-label={`Remove parent ${value.title}`} onClick={() => onChange(null)}>
            ✕
          </button>
        </p>
      </div>
    );
  }
  return (
    <div class="field">
      <label for="new-task-parent">Parent</label>
      <input id="new-task-parent" type="search" placeholder="Search tasks by title" autocomplete="off" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      {q && (
        <TaskSuggestions
          label="Matching parents"
          pending={found === null ? 'Searching…' : null}
          tasks={found ?? []}
          query={query}
          onPick={(t) => {
            chosen.current = true;
            onChange({ id: t.id, title: t.title });
            setQuery('');
          }}
        />
      )}
    </div>
  );
}

/** Assignee, parent, due date and not-before: every one a native control or a button, reached with Tab. */
export function NewTaskExtras({ extras, onChange }: { extras: Extras; onChange: (extras: Extras) => void }) {
  const set = <K extends keyof Extras>(key: K, value: Extras[K]) => onChange({ ...extras, [key]: value });
  return (
    <div class="task-fields">
      <div class="field-row">
        <div class="field">
          <label for="new-task-assignee">Assignee</label>
          <PrincipalPicker id="new-task-assignee" value={extras.assignee} onChange={(id) => set('assignee', id)} fixed={[{ value: '', label: 'Nobody (anyone may claim it)' }]} />
        </div>
        <div class="field field-grow">
          <ParentPicker value={extras.parent} onChange={(parent) => set('parent', parent)} />
        </div>
      </div>
      <div class="field-row">
        <div class="field">
          <label for="new-task-due">Due</label>
          <input id="new-task-due" type="datetime-local" value={extras.due_at} onInput={(e) => set('due_at', e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="new-task-not-before">Not before</label>
          <input id="new-task-not-before" type="datetime-local" value={extras.not_before} onInput={(e) => set('not_before', e.currentTarget.value)} />
        </div>
        <AttemptsField id="new-task-attempts" value={extras.max_attempts} onChange={(value) => set('max_attempts', value)} />
      </div>
    </div>
  );
}
