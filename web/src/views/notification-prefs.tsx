import { useEffect, useState } from 'preact/hooks';
import type { OutputOf } from '../../../src/client/index.ts';
import { useAction } from '../action.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';

type Preferences = OutputOf<'preferences_get'>;

const EMAIL_CHOICES: readonly { value: Preferences['email']; label: string }[] = [
  { value: 'immediate', label: 'Asks, approvals, overdue waits and budgets at once; the rest in a digest' },
  { value: 'digest', label: 'Everything in a digest' },
  { value: 'off', label: 'No email' },
];

/**
 * A person's notification preferences (spec/notifications.md "Preferences"): how Baton emails
 * them and whether asks to them are posted in the chat channel. Each change is saved at once.
 */
export function NotificationPrefs() {
  const [prefs, setPrefs] = useState<Preferences | null>(null);
  const [loadProblem, setLoadProblem] = useState<Problem | null>(null);
  const action = useAction();
  const load = () =>
    call('preferences_get', {}).then(
      (res) => {
        setPrefs(res);
        setLoadProblem(null);
      },
      (error: unknown) => setLoadProblem(problemOf(error)),
    );
  useEffect(() => void load(), []);
  // Shown as chosen at once (a controlled radio would otherwise spring back until the answer
  // comes), then as saved; a refused change puts the choice back.
  const save = (change: { email?: Preferences['email']; chat?: boolean }) => {
    const before = prefs;
    setPrefs((shown) => shown && { ...shown, ...change });
    void action.send({ operation: 'preferences_update', input: change }, setPrefs).then((problem) => problem && setPrefs(before));
  };

  return (
    <section id="notifications" class="card" aria-labelledby="notifications-title">
      <h2 id="notifications-title">Notifications</h2>
      {action.problem && <ProblemNotice problem={action.problem} onDismiss={action.dismiss} />}
      {loadProblem && <ProblemNotice problem={loadProblem} onRetry={() => void load()} />}
      {!prefs ? (
        !loadProblem && <Loading what="notification preferences" />
      ) : (
        <form onSubmit={(e) => e.preventDefault()}>
          <fieldset disabled={action.busy}>
            <legend>Email</legend>
            {EMAIL_CHOICES.map((choice) => (
              <label key={choice.value} class="choice">
                <input type="radio" name="email" value={choice.value} checked={prefs.email === choice.value} onChange={() => save({ email: choice.value })} /> {choice.label}
              </label>
            ))}
          </fieldset>
          <label class="choice">
            <input type="checkbox" checked={prefs.chat} disabled={action.busy} onChange={(e) => save({ chat: e.currentTarget.checked })} /> Post asks to me in the team's chat channel
          </label>
          <p class="muted small">Changes apply to what arrives from now on.</p>
        </form>
      )}
    </section>
  );
}
