import { useEffect, useState } from 'preact/hooks';
import { call, getAll, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice, StatusBadge } from '../components.tsx';
import { timeLeft } from '../format.ts';
import { useNow } from '../hooks.ts';
import { useEvents } from '../session.ts';
import type { Task } from '../types.ts';

const OPEN = ['todo', 'in_progress', 'in_review', 'blocked'] as const;
const FIELDS = ['title', 'status', 'lease'] as const;

interface Held {
  /** Tasks in progress under its lease. */
  leased: Task[];
  /** Open tasks assigned to it that it does not hold. */
  assigned: Task[];
}

/**
 * Its active leases (`leases_list` by holder: exact however many tasks are in progress in the
 * workspace) and the open tasks assigned to it; a leased task comes from that list (a claim
 * assigns it to the claimer), or is read alone when it is not there.
 */
async function readHeld(id: string): Promise<Held> {
  const [leases, assigned] = await Promise.all([
    getAll('leases_list', { holder: id, state: 'active' }, 3),
    getAll('tasks_list', { assignee: id, status: [...OPEN], fields: [...FIELDS] }, 3),
  ]);
  const open = assigned.data as Task[];
  const leaseIds = new Set(leases.data.map((l) => l.id));
  const leased = await Promise.all(
    leases.data.map(async (l) => open.find((t) => t.id === l.task_id) ?? ((await call('tasks_get', { id: l.task_id, fields: [...FIELDS] })) as Task)),
  );
  return { leased, assigned: open.filter((t) => !(t.lease && leaseIds.has(t.lease.id))) };
}

/** What a principal holds now (its leases' tasks) and what waits for it (open tasks assigned to it), live. */
export function HeldNow({ id }: { id: string }) {
  const now = useNow(1000);
  const [held, setHeld] = useState<Held | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    readHeld(id).then(
      (next) => {
        setHeld(next);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => {
    void load();
  }, [id]);
  useEvents((event) => {
    if (/^(task\.(claimed|assigned|status_changed|handed_in|deleted)|lease\.(released|expired))$/.test(event.type)) void load();
  });
  return (
    <section class="card" aria-labelledby="held-title">
      <h2 id="held-title">Holds now</h2>
      {problem && <ProblemNotice problem={problem} onRetry={() => void load()} />}
      {!held && !problem && <Loading what="what it holds" />}
      {held && held.leased.length === 0 && held.assigned.length === 0 && <p class="empty">Holds no task and has none assigned.</p>}
      {held && held.leased.length > 0 && (
        <ul class="held-list" aria-label="Tasks it holds">
          {held.leased.map((t) => (
            <li key={t.id}>
              <a href={`/tasks/${t.id}`}>{t.title}</a>
              {t.lease && <span class="lease-time">{timeLeft(t.lease.expires_at, now)}</span>}
            </li>
          ))}
        </ul>
      )}
      {held && held.assigned.length > 0 && (
        <>
          <h3>Assigned, not held</h3>
          <ul class="held-list" aria-label="Tasks assigned to it">
            {held.assigned.map((t) => (
              <li key={t.id}>
                <a href={`/tasks/${t.id}`}>{t.title}</a>
                <StatusBadge status={t.status} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
