import { useEffect, useState } from 'preact/hooks';
import { authHeaders, call, getAll, type Problem, problemOf } from '../api.ts';
import { ActorChip, Labels, Loading, PageProblem, PriorityBadge, ProblemNotice, StatusBadge } from '../components.tsx';
import { bytes, exact, STATUS_LABEL, timeLeft } from '../format.ts';
import { useNow, useShortcuts } from '../hooks.ts';
import { Markdown } from '../markdown.tsx';
import { can, useEvents, useSession } from '../session.ts';
import { TaskEditor } from './task-editor.tsx';
import type { ArtifactRef, BatonEvent, Status, Task } from '../types.ts';
import { LinkNotice } from './link-notice.tsx';
import { MoveNotice } from './move-notice.tsx';
import { MoveMenu } from './move-menu.tsx';
import { useMove } from './move.ts';
import { Timeline } from './timeline.tsx';
import { AssigneePanel, AttemptsPanel, Comments, ReviewPanel } from './collaboration.tsx';
import { SubtasksPanel } from './subtasks.tsx';
import { RunsPanel } from './runs.tsx';
import { AsksPanel } from './task-asks.tsx';
import { ReservationsPanel } from './task-reservations.tsx';
import { useConfirm } from '../confirm.tsx';
import { useUndo } from '../undo.tsx';
import { DeleteTask } from './task-delete.tsx';
import { ArchiveTask } from './task-archive.tsx';
import { cancelConfirmation, undoMove } from './undo-move.ts';

function artifactsOf(task: Task): ArtifactRef[] {
  return task.artifacts ?? [];
}

/** Artifacts need the bearer header, so they are fetched and handed to the browser as a download, under their file name where they have one. */
async function download(artifact: ArtifactRef): Promise<void> {
  const res = await fetch(artifact.href, { headers: authHeaders() });
  if (!res.ok) return;
  const url = URL.createObjectURL(await res.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = artifact.name ?? artifact.id;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** One task: its fields, artifacts, lease and live timeline. */
export function TaskPage({ id }: { id: string }) {
  const [task, setTask] = useState<Task | null>(null);
  const [events, setEvents] = useState<BatonEvent[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [eventsProblem, setEventsProblem] = useState<Problem | null>(null);
  const now = useNow();
  const session = useSession();
  const [editing, setEditing] = useState(false);
  useShortcuts({
    e: () => setEditing(can(session, 'tasks_update')),
    m: (event) => {
      event.preventDefault();
      document.querySelector<HTMLButtonElement>('.task-head .move-toggle')?.click();
    },
  });
  const onTask = (t: Task) => setTask((current) => (current && current.version > t.version ? current : { ...current, ...t }));
  /** An archive's answer (compact) carries `archived_at` only where set: an unarchived task drops the one it had. */
  const onArchive = (t: Task) =>
    setTask((current) => {
      if (current && current.version > t.version) return current;
      const kept: Partial<Task> = { ...current };
      delete kept.archived_at;
      return { ...kept, ...t };
    });
  const { move, failed, busy, dismiss } = useMove(onTask);
  const confirm = useConfirm();
  const showUndo = useUndo();
  /** A move asked first when it cancels, and offered for undo once done. */
  const moveTo = async (from: Task, to: Status, key?: string) => {
    if (to === 'cancelled' && !(await confirm.ask(cancelConfirmation(from)))) return;
    const moved = await move(from, to, key);
    if (moved) showUndo(`Moved “${from.title}” to ${STATUS_LABEL[to]}.`, undoMove(from, moved, onTask));
  };

  const load = () =>
    call('tasks_get', { id, view: 'full' }).then((t) => setTask(t as Task), (error: unknown) => setProblem(problemOf(error)));
  const loadEvents = () => {
    setEventsProblem(null);
    getAll('tasks_events', { id, view: 'full' }).then(
      (res) => setEvents(res.data as BatonEvent[]),
      (error: unknown) => setEventsProblem(problemOf(error)),
    );
  };
  useEffect(() => {
    setTask(null);
    setEvents(null);
    setProblem(null);
    setEditing(false);
    void load();
    loadEvents();
  }, [id]);
  useEvents((event) => {
    if (event.subject !== id) return;
    setEvents((current) => (!current || current.some((e) => e.id === event.id) ? current : [...current, event]));
    void load();
  });

  if (problem) return <PageProblem problem={problem} />;
  if (!task) return <Loading what="the task" />;
  const artifacts = artifactsOf(task);
  return (
    <article class="page task-page" aria-labelledby="task-title">
      <p class="crumbs">
        <a href="/">Board</a> / <code>{task.id}</code>
      </p>
      <div class="task-head">
        <h1 id="task-title">{task.title}</h1>
        <div class="task-head-meta">
          <StatusBadge status={task.status} />
          {task.archived_at && <span class="status status-archived">Archived</span>}
          <PriorityBadge priority={task.priority} />
          <MoveMenu task={task} onMove={(to) => void moveTo(task, to)} disabled={busy === task.id} />
        </div>
      </div>
      <div aria-live="polite">{failed && <MoveNotice failed={failed} onMove={(t, to, key) => void moveTo(t, to, key)} onDismiss={dismiss} />}</div>
      {confirm.dialog}
      <LinkNotice onAnswered={() => void load()} />
      <div class="task-grid">
        <div class="task-main">
          <section class="card">
            <div class="card-head">
              <h2>{editing ? 'Edit task' : 'Description'}</h2>
              {!editing && can(session, 'tasks_update') && (
                <button type="button" class="button-quiet" onClick={() => setEditing(true)} aria-keyshortcuts="e">
                  Edit
                </button>
              )}
            </div>
            {editing ? (
              <TaskEditor
                task={task}
                onCancel={() => setEditing(false)}
                onSaved={(saved) => {
                  setTask((current) => ({ ...current, ...saved }));
                  setEditing(false);
                }}
              />
            ) : (
              <>
                {task.description ? <Markdown source={task.description} /> : <p class="muted">No description.</p>}
                <Labels labels={task.labels} />
              </>
            )}
          </section>
          {can(session, 'asks_list') && <AsksPanel taskId={task.id} />}
          {can(session, 'runs_list') && <RunsPanel taskId={task.id} labels={task.labels} />}
          <section class="card">
            <h2>Timeline</h2>
            {eventsProblem ? (
              <ProblemNotice problem={eventsProblem} onRetry={loadEvents} />
            ) : events ? (
              <Timeline events={events} now={now} />
            ) : (
              <Loading what="the timeline" />
            )}
          </section>
          <Comments taskId={task.id} />
        </div>
        <aside class="task-side">
          <ReviewPanel task={task} onChanged={setTask} />
          <AttemptsPanel task={task} onChanged={setTask} />
          <AssigneePanel task={task} onChanged={setTask} />
          <SubtasksPanel task={task} />
          <section class="card">
            <h2>Lease</h2>
            {task.lease ? (
              <dl class="facts">
                <dt>Holder</dt>
                <dd>
                  <ActorChip actor={task.lease.holder} />
                </dd>
                <dt>Time left</dt>
                <dd class={Date.parse(task.lease.expires_at) < now ? 'lease-expired' : ''}>{timeLeft(task.lease.expires_at, now)}</dd>
                <dt>Epoch</dt>
                <dd>{task.lease.epoch}</dd>
              </dl>
            ) : (
              <p class="muted">Nobody holds this task.</p>
            )}
          </section>
          {can(session, 'reservations_list') && <ReservationsPanel taskId={task.id} now={now} />}
          <section class="card">
            <h2>Details</h2>
            <dl class="facts">
              <dt>Version</dt>
              <dd>{task.version}</dd>
              {task.created_by && (
                <>
                  <dt>Created by</dt>
                  <dd>
                    <ActorChip actor={task.created_by} />
                  </dd>
                </>
              )}
              {task.created_at && (
                <>
                  <dt>Created</dt>
                  <dd>{exact(task.created_at)}</dd>
                </>
              )}
              <dt>Updated</dt>
              <dd>{exact(task.updated_at)}</dd>
              {task.due_at && (
                <>
                  <dt>Due</dt>
                  <dd class={task.overdue ? 'overdue' : ''}>
                    {exact(task.due_at)}
                    {task.overdue ? ' (overdue)' : ''}
                  </dd>
                </>
              )}
              {task.not_before && Date.parse(task.not_before) > now && (
                <>
                  <dt>Not before</dt>
                  <dd>{exact(task.not_before)}</dd>
                </>
              )}
              {task.blocked_by && task.blocked_by.length > 0 && (
                <>
                  <dt>Blocked by</dt>
                  <dd>
                    {task.blocked_by.map((b) => (
                      <a key={b} href={`/tasks/${b}`} class={task.waiting_on.includes(b) ? 'dep dep-open' : 'dep'}>
                        {b}
                      </a>
                    ))}
                  </dd>
                </>
              )}
            </dl>
          </section>
          <section class="card">
            <h2>Artifacts</h2>
            {artifacts.length === 0 ? (
              <p class="muted">No artifacts.</p>
            ) : (
              <ul class="artifacts">
                {artifacts.map((a) => (
                  <li key={a.id}>
                    <button type="button" class="button-link" onClick={() => void download(a)}>
                      {a.name ?? a.id}
                    </button>
                    <span class="muted small">
                      {' '}
                      {a.content_type}, {bytes(a.size)}
                    </span>
                  </li>
                ))}
              </ul>
            )}
          </section>
          {can(session, 'tasks_update') && <ArchiveTask task={task} onChanged={onArchive} />}
          {can(session, 'tasks_delete') && <DeleteTask task={task} ask={confirm.ask} />}
        </aside>
      </div>
    </article>
  );
}
