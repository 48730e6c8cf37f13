import { useEffect, useState } from 'preact/hooks';
import { useAction } from '../action.ts';
import { getAll, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { exact } from '../format.ts';
import { useSession } from '../session.ts';
import { NotificationPrefs } from './notification-prefs.tsx';

interface SignedInSession {
  id: string;
  device: string;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  current: boolean;
}

/**
 * The signed-in person's own page: their notification preferences (for a person) and their web
 * sessions (single sign-on), each with its device and last use; any but this one can be ended here.
 */
export function Sessions() {
  const human = useSession().whoami.principal.kind === 'human';
  const [sessions, setSessions] = useState<SignedInSession[] | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const action = useAction();
  const load = () =>
    getAll('sessions_list', {}).then(
      (res) => {
        setSessions(res.data);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);
  const revoke = (id: string) => void action.send({ operation: 'sessions_revoke', input: { id } }, load);

  return (
    <section class="page" aria-labelledby="sessions-title">
      <h1 id="sessions-title">Your sessions</h1>
      <p class="muted">Where you are signed in with single sign-on. Ending a session signs that browser out at its next request.</p>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!sessions ? (
        !loadProblem && <Loading what="sessions" />
      ) : sessions.length === 0 ? (
        <p class="muted">No web sessions: you signed in with a token.</p>
      ) : (
        <div class="table-wrap card">
          <table class="table sessions">
            <thead>
              <tr>
                <th scope="col">Device</th>
                <th scope="col">Last seen</th>
                <th scope="col">Signed in</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {sessions.map((s) => (
                <tr key={s.id} data-session-id={s.id}>
                  <td>
                    {s.device} {s.current && <span class="status status-done">This browser</span>}
                  </td>
                  <td class="small">{exact(s.last_seen_at)}</td>
                  <td class="small">{exact(s.created_at)}</td>
                  <td class="actions">
                    {!s.current && (
                      <button type="button" class="button-quiet" disabled={action.busy} onClick={() => revoke(s.id)}>
                        End session
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {human && <NotificationPrefs />}
    </section>
  );
}
