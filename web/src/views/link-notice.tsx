import { useEffect, useState } from 'preact/hooks';
import { call, newKey, type Problem, problemOf } from '../api.ts';
import { ProblemNotice } from '../components.tsx';

/**
 * A link from a notification (spec/notifications.md, "Links"): the task page's `?link=`. It is used
 * once on arrival (after sign-in, which keeps the address) and taken off the address, so a reload
 * does not use it again; an option link says what it answered, a refused one why.
 */
export function LinkNotice({ onAnswered }: { onAnswered: () => void }) {
  const [token] = useState(() => new URLSearchParams(location.search).get('link'));
  const [answered, setAnswered] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    if (!token) return;
    const url = new URL(location.href);
    url.searchParams.delete('link');
    history.replaceState(history.state, '', url.pathname + url.search + url.hash);
    call('links_redeem', { token }, { key: newKey() }).then(
      (done) => {
        if (!done.answered) return;
        setAnswered(done.answered.answer?.option ?? done.answered.answer?.text ?? '');
        onAnswered();
      },
      (error: unknown) => setProblem(problemOf(error)),
    );
  }, [token]);
  if (problem) return <ProblemNotice problem={problem} onDismiss={() => setProblem(null)} />;
  if (answered !== null) {
    return (
      <p class="notice notice-approved" role="status">
        You answered “{answered}”.
      </p>
    );
  }
  return null;
}
