import { useEffect, useState } from 'preact/hooks';
import { call } from '../api.ts';
import { StatusBadge } from '../components.tsx';
import { Markdown } from '../markdown.tsx';
import { PRIORITIES, type Priority, type Task } from '../types.ts';

/** The editable fields of a task as the form holds them (labels as typed, split on save). */
export interface TaskDraft {
  title: string;
  description: string;
  priority: Priority;
  labels: string;
  blocked_by: string[];
}

export const EMPTY_DRAFT: TaskDraft = { title: '', description: '', priority: 'normal', labels: '', blocked_by: [] };

export function draftOf(task: Task): TaskDraft {
  return { title: task.title, description: task.description ?? '', priority: task.priority, labels: task.labels.join(', '), blocked_by: task.blocked_by ?? [] };
}

/** The request body for a draft: labels split on commas and spaces, lowercased. */
export function bodyOf(draft: TaskDraft) {
  const labels = [...new Set(draft.labels.split(/[\s,]+/).map((l) => l.trim().toLowerCase()).filter(Boolean))];
  return { title: draft.title.trim(), description: draft.description, priority: draft.priority, labels, blocked_by: draft.blocked_by };
}

/** Markdown with Write / Preview tabs; the preview is rendered exactly as the task page shows it. */
function DescriptionField({ id, value, onInput }: { id: string; value: string; onInput: (text: string) => void }) {
  const [preview, setPreview] = useState(false);
  return (
    <div class="field">
      <div class="field-head">
        <label for={id}>Description</label>
        <span class="muted small">Markdown</span>
        <div class="tabs" role="group" aria-label="Description mode">
          <button type="button" class="tab" aria-pressed={!preview} onClick={() => setPreview(false)}>
            Write
          </button>
          <button type="button" class="tab" aria-pressed={preview} onClick={() => setPreview(true)}>
            Preview
          </button>
        </div>
      </div>
      {preview ? (
        <div class="preview" data-testid="description-preview">
          {value.trim() ? <Markdown source={value} /> : <p class="muted">Nothing to preview.</p>}
        </div>
      ) : (
        <textarea id={id} rows={7} value={value} onInput={(e) => onInput(e.currentTarget.value)} />
      )}
    </div>
  );
}

/** How many matches a task search by title shows. */
const MATCHES = 8;

/**
 * The tasks the server's ranked search finds for `q` (the best `MATCHES` and `extra` more, for a
 * picker that drops some), asked once typing pauses; null while it is asked. Every task of the
 * workspace is found, however many: the page never loads them all to filter.
 */
export function useTaskSearch(q: string, extra = 0): Task[] | null {
  const [found, setFound] = useState<{ q: string; tasks: Task[] } | null>(null);
  useEffect(() => {
    if (!q) return undefined;
    const timer = setTimeout(() => {
      call('tasks_list', { q, limit: MATCHES + extra, fields: ['title', 'status'] }).then(
        (page) => setFound({ q, tasks: page.data as Task[] }),
        () => setFound({ q, tasks: [] }),
      );
    }, 200);
    return () => clearTimeout(timer);
  }, [q, extra]);
  // An answer to an older query is not shown as this one's.
  return found?.q === q ? found.tasks : null;
}

/**
 * Blockers chosen by searching tasks by title (the server's search); each chosen one can be
 * removed. The titles of blockers it is given (a task being edited) are read once each.
 */
function DependencyPicker({ id, value, exclude, onChange }: { id: string; value: string[]; exclude?: string; onChange: (ids: string[]) => void }) {
  const [query, setQuery] = useState('');
  const [titles, setTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const q = query.trim();
  const found = useTaskSearch(q, value.length + 1);
  useEffect(() => {
    const unknown = value.filter((dep) => !titles.has(dep));
    if (unknown.length === 0) return;
    // One that cannot be read (deleted since) stays shown by its id.
    void Promise.all(unknown.map((dep) => call('tasks_get', { id: dep, fields: ['title'] }).then((t) => [dep, t.title] as const, () => [dep, dep] as const))).then((read) =>
      setTitles((known) => new Map([...known, ...read])),
    );
  }, [value.join(',')]);
  const matches = (found ?? []).filter((t) => t.id !== exclude && !value.includes(t.id)).slice(0, MATCHES);
  const titleOf = (dep: string) => titles.get(dep) ?? dep;
  return (
    <div class="field">
      <label for={id}>Blocked by</label>
      {value.length > 0 && (
        <ul class="chosen" aria-label="Chosen blockers">
          {value.map((dep) => (
            <li key={dep} class="chip">
              <span>{titleOf(dep)}</span>
              <button type="button" class="button-quiet chip-remove" aria-label={`Remove blocker ${titleOf(dep)}`} onClick={() => onChange(value.filter((d) => d !== dep))}>
                ✕
              </button>
            </li>
          ))}
        </ul>
      )}
      <input id={id} type="search" placeholder="Search tasks by title" autocomplete="off" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      {q && (
        <TaskSuggestions
          label="Matching tasks"
          pending={found === null ? 'Searching…' : null}
          tasks={matches}
          query={query}
          onPick={(t) => {
            setTitles((known) => new Map([...known, [t.id, t.title]]));
            onChange([...value, t.id]);
            setQuery('');
          }}
        />
      )}
    </div>
  );
}

/** Tasks matching a title search, each a button that picks it: the blocker and parent pickers' list. */
export function TaskSuggestions(props: { label: string; pending: string | null; tasks: readonly Task[]; query: string; onPick: (task: Task) => void }) {
  return (
    <ul class="suggestions" aria-label={props.label}>
      {props.pending !== null && <li class="muted">{props.pending}</li>}
      {props.pending === null && props.tasks.length === 0 && <li class="muted">No task matches “{props.query}”.</li>}
      {props.tasks.map((t) => (
        <li key={t.id}>
          <button type="button" class="suggestion" onClick={() => props.onPick(t)}>
            <StatusBadge status={t.status} /> {t.title}
          </button>
        </li>
      ))}
    </ul>
  );
}

/** Title, Markdown description, priority, labels and blockers: shared by "New task" and the task page's edit. */
/** Title, description, priority and labels; and the blockers, unless `blockers` is false (a schedule's task, made anew each run, has none). */
export function TaskFields({ prefix, draft, onChange, taskId, blockers = true }: { prefix: string; draft: TaskDraft; onChange: (draft: TaskDraft) => void; taskId?: string; blockers?: boolean }) {
  const set = <K extends keyof TaskDraft>(key: K, value: TaskDraft[K]) => onChange({ ...draft, [key]: value });
  return (
    <div class="task-fields">
      <div class="field">
        <label for={`${prefix}-title`}>Title</label>
        <input id={`${prefix}-title`} type="text" required maxLength={200} value={draft.title} onInput={(e) => set('title', e.currentTarget.value)} />
      </div>
      <DescriptionField id={`${prefix}-description`} value={draft.description} onInput={(text) => set('description', text)} />
      <div class="field-row">
        <div class="field">
          <label for={`${prefix}-priority`}>Priority</label>
          <select id={`${prefix}-priority`} value={draft.priority} onChange={(e) => set('priority', e.currentTarget.value as Priority)}>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </div>
        <div class="field field-grow">
          <label for={`${prefix}-labels`}>Labels</label>
          <input id={`${prefix}-labels`} type="text" placeholder="docs, release" aria-describedby={`${prefix}-labels-help`} value={draft.labels} onInput={(e) => set('labels', e.currentTarget.value)} />
          <span id={`${prefix}-labels-help`} class="muted small">
            Separated by commas or spaces.
          </span>
        </div>
      </div>
      {blockers && <DependencyPicker id={`${prefix}-deps`} value={draft.blocked_by} {...(taskId ? { exclude: taskId } : {})} onChange={(ids) => set('blocked_by', ids)} />}
    </div>
  );
}
