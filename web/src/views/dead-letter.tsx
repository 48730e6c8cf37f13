import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { Labels, Loading, ProblemNotice } from '../components.tsx';
import { exact } from '../format.ts';
import { focusedItem, type Selection, useSelection } from '../bulk.ts';
import { useShortcuts } from '../hooks.ts';
import { useEvents } from '../session.ts';
import { BulkBar, BulkResults, SelectBox, useBulk } from './bulk-bar.tsx';
import type { CollabTask } from './collaboration.tsx';

/** The dead-letter view: tasks that used every attempt and left the queue, each with its failures and Requeue; several requeued at once. */
export function DeadLetter() {
  const [tasks, setTasks] = useState<CollabTask[] | null>(null);
  const [more, setMore] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const selection = useSelection();
  const bulk = useBulk(selection, () => void load());
  const order = () => tasks?.map((t) => t.id) ?? [];
  useShortcuts({
    x: (event) => {
      const id = focusedItem('data-task');
      if (!id) return;
      event.preventDefault();
      selection.toggle(id, order());
    },
  });
  const requeueSelected = () =>
    bulk.run(
      'Requeue',
      (tasks ?? []).filter((t) => selection.selected.has(t.id)).map((t) => ({ id: t.id, label: t.title })),
      (item) => ({ operation: 'tasks_requeue', input: { id: item.id } }),
    );

  const load = async () => {
    try {
      const page = await call('tasks_list', { blocked_reason: 'attempts_exhausted', view: 'full', limit: 100 });
      setTasks(page.data as CollabTask[]);
      setMore(page.has_more);
      setProblem(null);
    } catch (error) {
      setProblem(problemOf(error));
    }
  };
  useEffect(() => void load(), []);
  // A task enters with task.dead_lettered and leaves with task.requeued (here or anywhere else).
  useEvents((event) => {
    if (event.type === 'task.dead_lettered' || event.type === 'task.requeued') void load();
  });

  return (
    <section class="page" aria-labelledby="dead-letter-title">
      <div class="page-head">
        <h1 id="dead-letter-title">Dead letter</h1>
        <p class="muted">Tasks whose every attempt failed: they left the queue until someone requeues them.</p>
      </div>
      {problem && <ProblemNotice problem={problem} onRetry={() => void load()} />}
      {bulk.report && <BulkResults report={bulk.report} onDismiss={bulk.dismiss} />}
      <BulkBar selection={selection} matching={order()} noun="dead letter" busy={bulk.busy}>
        <button type="button" class="button-primary" disabled={bulk.busy} onClick={() => void requeueSelected()}>
          Requeue {selection.selected.size}
        </button>
      </BulkBar>
      {tasks === null && !problem && <Loading what="dead letters" />}
      {tasks?.length === 0 && <p class="empty">No dead letters: every task still has attempts left.</p>}
      <ul class="dead-letters" aria-label="Dead-lettered tasks">
        {tasks?.map((task) => <DeadLetterRow key={task.id} task={task} selection={selection} order={order} onRequeued={() => setTasks((all) => all?.filter((t) => t.id !== task.id) ?? null)} />)}
      </ul>
      {more && <p class="muted" role="status">These are the newest 100 dead letters; more wait behind them. Requeue or cancel these to see the rest.</p>}
    </section>
  );
}

function DeadLetterRow({ task, selection, order, onRequeued }: { task: CollabTask; selection: Selection; order: () => readonly string[]; onRequeued: () => void }) {
  const action = useAction();
  const last = task.failures?.at(-1);
  const requeue = () => action.send({ operation: 'tasks_requeue', input: { id: task.id } }, onRequeued);
  return (
    <li class="card dead-letter-task" data-task={task.id}>
      <h2 class="select-line">
        <SelectBox id={task.id} label={task.title} selection={selection} order={order} />
        <a href={`/tasks/${task.id}`}>{task.title}</a>
      </h2>
      <Labels labels={task.labels} />
      <p>
        {task.attempts ?? 0} failed attempt{task.attempts === 1 ? '' : 's'}
        {last && (
          <>
            ; the last {exact(last.at)}: {last.kind === 'expired' ? 'the lease ran out' : (last.reason ?? 'failed')}
          </>
        )}
      </p>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      <button type="button" class="button-primary" disabled={action.busy} onClick={() => void requeue()}>
        Requeue
      </button>
    </li>
  );
}
