import { useEffect, useState } from 'preact/hooks';
import { call, type Problem, problemOf } from '../api.ts';
import { ActorChip, ProblemNotice } from '../components.tsx';
import { exact, timeLeft } from '../format.ts';
import { useEvents } from '../session.ts';
import type { BatonEvent, Reservation } from '../types.ts';

/** What a reservation holds: a named resource, or globs in a repository. */
function heldThing(r: Reservation): string {
  return r.resource ?? `${r.repo ?? ''}: ${(r.paths ?? []).join(', ')}`;
}

/** Whether an event may change the task's live reservations: one taken for it, one it shows ending, or its lease ending. */
function touches(event: BatonEvent, taskId: string, shown: readonly Reservation[]): boolean {
  if (event.type === 'reservation.acquired') return event.data.task_id === taskId;
  if (event.type.startsWith('reservation.')) return shown.some((r) => r.id === event.subject);
  return event.subject === taskId && /^(lease\.(released|expired)|task\.(status_changed|handed_in))/.test(event.type);
}

/**
 * The reservations held for the task now (spec/collaboration.md, "Reservations"; `reservations_list`
 * with `task_id`): what is held, in which mode, by whom and until when. Live on `reservation.*`
 * events and on the lease's end, which ends those that follow it.
 */
export function ReservationsPanel({ taskId, now }: { taskId: string; now: number }) {
  const [held, setHeld] = useState<Reservation[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const load = () =>
    call('reservations_list', { task_id: taskId, limit: 50 }).then(
      (page) => {
        setHeld(page.data);
        setProblem(null);
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  useEffect(() => {
    setHeld(null);
    void load();
  }, [taskId]);
  useEvents((event) => {
    if (touches(event, taskId, held ?? [])) void load();
  });
  return (
    <section class="card" aria-labelledby="task-reservations-title">
      <h2 id="task-reservations-title">Reservations</h2>
      {problem ? (
        <ProblemNotice problem={problem} onRetry={() => void load()} />
      ) : held === null ? null : held.length === 0 ? (
        <p class="muted">None held for this task.</p>
      ) : (
        <ul class="task-reservations">
          {held.map((r) => (
            <li key={r.id} data-reservation={r.id}>
              <code>{heldThing(r)}</code> <span class="muted small">({r.mode})</span>
              <br />
              <ActorChip actor={r.holder} />{' '}
              <span class={Date.parse(r.expires_at) < now ? 'lease-expired small' : 'small'} title={exact(r.expires_at)}>
                {timeLeft(r.expires_at, now)}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
