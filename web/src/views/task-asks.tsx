import { useEffect, useState } from 'preact/hooks';
import { useNames } from '../directory.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { ActorChip, ProblemNotice } from '../components.tsx';
import { useEvents } from '../session.ts';
import type { Ask } from '../types.ts';
import { AskAnswer } from './inbox-items.tsx';

/** The asks shown: the newest 20 of the task, open ones first. */
const ASKS = 20;

/** Who an ask is put to now: a principal by name, or everyone with a role. */
function askedOf(to: string, names: Map<string, string>): string {
  return to.startsWith('role:') ? `anyone with the ${to.slice(5)} role` : (names.get(to) ?? to);
}

/**
 * The task's asks (spec/asks.md): each question with who asked it, who is asked now and (while
 * open) by when;
 * an open one is answered here as in the inbox (`asks_answer`), a closed one says how it closed.
 * Live: an `ask.*` event on the task reads them again. Nothing shows while the task has none.
 */
export function AsksPanel({ taskId }: { taskId: string }) {
  const [asks, setAsks] = useState<Ask[]>([]);
  const names = useNames(asks.map((ask) => ask.to));
  const [problem, setProblem] = useState<Problem | null>(null);
  const [said, setSaid] = useState('');
  const load = () =>
    call('asks_list', { task_id: taskId, limit: ASKS }).then(
      (page) => {
        setAsks(page.data);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => {
    setAsks([]);
    setSaid('');
    void load();
  }, [taskId]);
  useEvents((event) => {
    if (event.subject === taskId && event.type.startsWith('ask.')) void load();
  });
  if (problem) return <ProblemNotice problem={problem} onRetry={() => void load()} />;
  if (asks.length === 0) return null;
  const shown = [...asks.filter((a) => a.status === 'open'), ...asks.filter((a) => a.status !== 'open')];
  return (
    <section class="card" aria-labelledby="task-asks-title">
      <h2 id="task-asks-title">Asks</h2>
      <p class="sr-only" role="status" aria-live="polite">
        {said}
      </p>
      <ul class="task-asks">
        {shown.map((ask) => (
          <li key={ask.id} class="task-ask" data-ask={ask.id} data-status={ask.status}>
            <p class="task-ask-question">{ask.question}</p>
            <p class="small muted">
              Asked by <ActorChip actor={ask.asked_by} /> of {askedOf(ask.to, names)}
            </p>
            <AskAnswer askId={ask.id} ask={ask} onAnswered={setSaid} />
          </li>
        ))}
      </ul>
    </section>
  );
}
