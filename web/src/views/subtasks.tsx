import { useEffect, useState } from 'preact/hooks';
import { call, getAll, type Problem, problemOf } from '../api.ts';
import { ProblemNotice, StatusBadge } from '../components.tsx';
import { STATUS_LABEL } from '../format.ts';
import { STATUSES, type Task } from '../types.ts';

/** The task's place in its tree: a link to its parent, its subtasks' counts by status, and the subtasks. */
export function SubtasksPanel({ task }: { task: Task }) {
  const [parent, setParent] = useState<Task | null>(null);
  const [children, setChildren] = useState<Task[]>([]);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [attempt, setAttempt] = useState(0);
  const total = STATUSES.reduce((n, s) => n + (task.children?.[s] ?? 0), 0);
  useEffect(() => {
    setParent(null);
    if (task.parent_id) call('tasks_get', { id: task.parent_id, fields: ['title', 'status'] }).then((t) => setParent(t as Task), () => undefined);
  }, [task.parent_id]);
  useEffect(() => {
    if (total === 0) return setChildren([]);
    getAll('tasks_list', { parent: task.id }).then(
      (res) => {
        setChildren(res.data as Task[]);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  }, [task.id, task.version, total, attempt]);
  if (!task.parent_id && total === 0) return null;
  return (
    <section class="card subtasks" aria-labelledby="subtasks-title">
      <h2 id="subtasks-title">Subtasks</h2>
      {task.parent_id && (
        <p class="parent-link">
          Part of <a href={`/tasks/${task.parent_id}`}>{parent?.title ?? task.parent_id}</a>
        </p>
      )}
      {total > 0 && (
        <>
          <p class="child-counts" aria-label="Subtasks by status">
            {STATUSES.filter((s) => (task.children?.[s] ?? 0) > 0).map((s) => (
              <span key={s} class="child-count">
                {STATUS_LABEL[s]}: {task.children?.[s]}
              </span>
            ))}
          </p>
          {problem && <ProblemNotice problem={problem} onRetry={() => setAttempt((n) => n + 1)} />}
          <ul class="children">
            {children.map((child) => (
              <li key={child.id}>
                <StatusBadge status={child.status} /> <a href={`/tasks/${child.id}`}>{child.title}</a>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
