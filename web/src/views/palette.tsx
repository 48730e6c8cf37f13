import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { CallName, InputOf } from '../../../src/client/index.ts';
import { call, newKey, type Problem, problemOf } from '../api.ts';
import { ProblemNotice } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import { navigate } from '../router.ts';
import type { Status, Task } from '../types.ts';
import { legalTargets } from './move-menu.tsx';
import { useConfirm } from '../confirm.tsx';
import { useUndo } from '../undo.tsx';
import { cancelConfirmation, undoMove } from './undo-move.ts';
import { type AnyWrite, useAction } from '../action.ts';
import { can, useSession } from '../session.ts';
import { archiveRequest, assignRequest, commentRequest, requeueRequest, reviewRequest } from './task-actions.ts';
import { isFinished } from './task-archive.tsx';
import { useDeleteTask } from './task-delete.tsx';

/** A task id, whole or its start: `tsk_` and at least 4 of its characters, or 6 of the ULID alone (a ULID starts with a digit, a word does not). */
const ID_PREFIX = /^(tsk_[0-9a-z]{6,26}|[0-7][0-9a-hjkmnp-tv-z]{5,25})$/i;
const MATCHES = 8;

interface Choice {
  id: string;
  label: string;
  group: 'action' | 'task';
  run: () => Promise<unknown> | void;
}

/** The task a palette opened on acts on: the task page's, or the board's selected card. */
function selectedTaskId(): string | null {
  const page = /^\/tasks\/([\w-]+)$/.exec(location.pathname)?.[1];
  if (page) return page;
  const card = document.querySelector<HTMLElement>('.task-card-selected') ?? document.activeElement?.closest<HTMLElement>('[data-task-id]');
  return card?.dataset.taskId ?? null;
}

/** Tasks whose id starts with the text (the server's `id_prefix`, as the CLI's short ids) or whose title matches (the server's search). */
async function findTasks(text: string): Promise<Task[]> {
  const read = (query: InputOf<'tasks_list'>) =>
    call('tasks_list', { ...query, limit: MATCHES, fields: ['title', 'status'] }).then(
      (page) => page.data as Task[],
      () => [],
    );
  if (ID_PREFIX.test(text)) {
    const byId = await read({ id_prefix: text.replace(/^tsk_/i, '') });
    if (byId.length > 0) return byId;
  }
  return read({ q: text });
}

/**
 * The command palette (Ctrl/Cmd+K): go to a task by title or id prefix, or run an action on the
 * selected task: open or edit it, approve its review, requeue it, assign it (to me, to nobody, to a
 * principal named in the text), move it to any legal status (Done and Cancelled last), delete it
 * (asked first), and with the text typed, comment or request changes. Arrow keys choose, Enter runs,
 * Escape closes. Moves are the board's (PATCH with If-Match and a fresh Idempotency-Key); the
 * other actions send the task page's requests (`task-actions.ts`, `useDeleteTask`).
 */
export function CommandPalette({ open, onClose }: { open: boolean; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const [target, setTarget] = useState<Task | null>(null);
  const [found, setFound] = useState<Task[]>([]);
  const [active, setActive] = useState(0);
  const [problem, setProblem] = useState<Problem | null>(null);
  useLayoutEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setText('');
      setFound([]);
      setActive(0);
      setProblem(null);
      setTarget(null);
      const id = selectedTaskId();
      // A task that cannot be read (gone, or the server busy) says so in place, rather than leaving the actions out unexplained.
      if (id) call('tasks_get', { id, view: 'full' }).then((task) => setTarget(task as Task), (error: unknown) => setProblem(problemOf(error)));
      element.showModal();
      input.current?.focus();
    } else if (!open && element.open) element.close();
  }, [open]);
  const q = text.trim();
  useEffect(() => {
    if (!q) {
      setFound([]);
      return undefined;
    }
    const timer = setTimeout(() => void findTasks(q).then(setFound), 150);
    return () => clearTimeout(timer);
  }, [q]);

  const confirm = useConfirm();
  const showUndo = useUndo();
  const go = (path: string) => {
    onClose();
    navigate(path);
  };
  const moveTo = async (task: Task, to: Status) => {
    if (to === 'cancelled' && !(await confirm.ask(cancelConfirmation(task)))) return;
    try {
      const moved = (await call('tasks_update', { id: task.id, status: to }, { key: newKey(), ifMatch: task.version })) as Task;
      onClose();
      showUndo(`Moved “${task.title}” to ${STATUS_LABEL[to]}.`, undoMove(task, moved, () => undefined));
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  const session = useSession();
  const action = useAction();
  const deletion = useDeleteTask(confirm.ask);
  const send = (request: AnyWrite) => action.send<CallName>(request, onClose);
  const actions: Choice[] = target
    ? [
        { id: 'open', label: `Open “${target.title}”`, group: 'action' as const, run: () => go(`/tasks/${target.id}`) },
        ...taskActions(target, q, session, send, onClose),
        ...legalTargets(target).map((to) => ({ id: `move-${to}`, label: `Move “${target.title}” to ${STATUS_LABEL[to]}`, group: 'action' as const, run: () => moveTo(target, to) })),
        ...(can(session, 'tasks_delete') ? [{ id: 'delete', label: `Delete “${target.title}”…`, group: 'action' as const, run: () => deletion.remove(target).then((deleted) => deleted && onClose()) }] : []),
      ].filter((c) => !q || c.label.toLowerCase().includes(q.toLowerCase()))
    : [];
  const choices: Choice[] = [
    ...actions,
    ...found.map((t) => ({ id: `task-${t.id}`, label: t.title, group: 'task' as const, run: () => go(`/tasks/${t.id}`) })),
    ...(target && q ? withText(target, q, session, send) : []),
  ];
  const current = Math.min(active, Math.max(0, choices.length - 1));
  const optionId = (c: Choice) => `palette-${c.id}`;

  return (
    <>
      <dialog ref={dialog} class="dialog palette" aria-labelledby="palette-heading" onClose={onClose}>
        <div class="dialog-form">
          <h2 id="palette-heading" class="sr-only">
            Command palette
          </h2>
          <input
            ref={input}
            type="text"
            class="palette-input"
            role="combobox"
            aria-expanded={choices.length > 0}
            aria-controls="palette-list"
            aria-autocomplete="list"
            aria-label="Go to a task by title or id, or run an action"
            aria-activedescendant={choices[current] ? optionId(choices[current]) : undefined}
            placeholder={target ? `Go to a task, or act on “${target.title}”` : 'Go to a task by title or id'}
            value={text}
            onInput={(e) => {
              setText(e.currentTarget.value);
              setActive(0);
            }}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
                e.preventDefault();
                setActive(Math.max(0, Math.min(choices.length - 1, current + (e.key === 'ArrowDown' ? 1 : -1))));
              } else if (e.key === 'Enter') {
                e.preventDefault();
                void choices[current]?.run();
              }
            }}
          />
          {problem && <ProblemNotice problem={problem} onDismiss={() => setProblem(null)} />}
          {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
          {deletion.action.problem && <ProblemNotice problem={deletion.action.problem} onDismiss={deletion.action.dismiss} />}
          {deletion.pending && (
            <p role="status">
              Deleting it waits for a human’s approval: <a href="/approvals">Approvals</a>.
            </p>
          )}
          <ul id="palette-list" role="listbox" aria-label="Results" class="palette-list">
            {choices.map((c, i) => (
              <li key={c.id} id={optionId(c)} role="option" aria-selected={i === current} class={i === current ? 'palette-option palette-active' : 'palette-option'} onClick={() => void c.run()}>
                <span class="muted small">{c.group === 'action' ? 'Action' : 'Task'}</span> {c.label}
              </li>
            ))}
          </ul>
          {q && choices.length === 0 && <p class="muted">Nothing matches “{q}”.</p>}
        </div>
      </dialog>
      {confirm.dialog}
    </>
  );
}

type Send = (request: AnyWrite) => Promise<unknown>;

/** The task page's actions that need no text, for what this token may do and the task's state. */
function taskActions(task: Task, q: string, session: ReturnType<typeof useSession>, send: Send, close: () => void): Choice[] {
  const me = session.whoami.principal.id;
  const name = `“${task.title}”`;
  const choices: Choice[] = [];
  const onPage = location.pathname === `/tasks/${task.id}`;
  if (onPage && can(session, 'tasks_update')) {
    choices.push({
      id: 'edit',
      label: `Edit ${name}`,
      group: 'action',
      run: () => {
        close();
        // The task page's own Edit button (what `e` does there).
        document.querySelector<HTMLButtonElement>('.task-page button[aria-keyshortcuts="e"]')?.click();
      },
    });
  }
  if (task.status === 'in_review' && can(session, 'tasks_review')) choices.push({ id: 'approve', label: `Approve the review of ${name}`, group: 'action', run: () => send(reviewRequest(task.id, 'approve', '')) });
  if (task.blocked_reason === 'attempts_exhausted' && can(session, 'tasks_requeue')) choices.push({ id: 'requeue', label: `Requeue ${name}`, group: 'action', run: () => send(requeueRequest(task.id)) });
  if ((task.archived_at || isFinished(task)) && can(session, 'tasks_update')) {
    const archive = !task.archived_at;
    choices.push({ id: 'archive', label: `${archive ? 'Archive' : 'Unarchive'} ${name}`, group: 'action', run: () => send({ ...archiveRequest(task.id, archive), ifMatch: task.version }) });
  }
  if (can(session, 'tasks_assign')) {
    const now = task.assignee?.id ?? null;
    if (now !== me) choices.push({ id: 'assign-me', label: `Assign ${name} to me`, group: 'action', run: () => send(assignRequest(task.id, me)) });
    if (now !== null) choices.push({ id: 'unassign', label: `Unassign ${name}`, group: 'action', run: () => send(assignRequest(task.id, null)) });
    // Everyone else only once a name is typed: the list stays short.
    if (q) {
      for (const [id, who] of session.names) {
        if (id !== me && id !== now) choices.push({ id: `assign-${id}`, label: `Assign ${name} to ${who}`, group: 'action', run: () => send(assignRequest(task.id, id)) });
      }
    }
  }
  return choices;
}

/** The actions that take the text typed: a comment, and changes requested in review. */
function withText(task: Task, q: string, session: ReturnType<typeof useSession>, send: Send): Choice[] {
  const choices: Choice[] = [];
  if (can(session, 'comments_create')) choices.push({ id: 'comment', label: `Comment on “${task.title}”: ${q}`, group: 'action', run: () => send(commentRequest(task.id, q)) });
  if (task.status === 'in_review' && can(session, 'tasks_review')) {
    choices.push({ id: 'request-changes', label: `Request changes on “${task.title}”: ${q}`, group: 'action', run: () => send(reviewRequest(task.id, 'request_changes', q)) });
  }
  return choices;
}

const KEYS: readonly [string, string][] = [
  ['Ctrl/Cmd+K', 'Command palette: go to a task, act on the selected one'],
  ['?', 'These shortcuts'],
  ['c', 'New task (Ctrl/Cmd+Enter creates it)'],
  ['/', 'Search the board'],
  ['j / k', 'Select the next / previous card (or inbox item)'],
  ['Enter', 'Open the selected card (or the inbox item’s task)'],
  ['m', 'Move the selected card (or this task)'],
  ['x', 'Select or unselect the focused card, dead letter or approval (for bulk actions; shift-click selects a range)'],
  ['e', 'Inbox: mark the focused item done'],
  ['z', 'Undo the move or bulk action just made (while its toast shows)'],
  ['Escape', 'Close a dialog or menu'],
];

/** `?`: the keyboard shortcuts, in a dialog. */
export function ShortcutsDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  useLayoutEffect(() => {
    const element = dialog.current;
    if (open && element && !element.open) element.showModal();
    else if (!open && element?.open) element.close();
  }, [open]);
  return (
    <dialog ref={dialog} class="dialog" aria-labelledby="shortcuts-heading" onClose={onClose}>
      <div class="dialog-form">
        <div class="dialog-head">
          <h2 id="shortcuts-heading">Keyboard shortcuts</h2>
          <button type="button" class="button-quiet" aria-label="Close" onClick={onClose}>
            ✕
          </button>
        </div>
        <dl class="shortcuts">
          {KEYS.map(([key, what]) => (
            <div key={key}>
              <dt>
                <kbd>{key}</kbd>
              </dt>
              <dd>{what}</dd>
            </div>
          ))}
        </dl>
      </div>
    </dialog>
  );
}
