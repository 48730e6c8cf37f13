import { useState } from 'preact/hooks';
import type { Problem } from './api.ts';
import { ProblemNotice } from './components.tsx';

/** Paste a token; it is kept in sessionStorage for this tab only and sent as a bearer header. */
export function SignIn({ onSubmit, problem }: { onSubmit: (token: string) => Promise<void>; problem: Problem | null }) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    try {
      await onSubmit(token.trim());
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="sign-in">
      <form class="card sign-in-card" onSubmit={(e) => void submit(e)}>
        <h1>
          <span class="brand-mark" aria-hidden="true" /> Baton
        </h1>
        <p class="muted">Sign in with your Baton token. It stays in this tab only and is forgotten when you close it.</p>
        <label for="token">Token</label>
        <input
          id="token"
          name="token"
          type="password"
          autoComplete="off"
          spellcheck={false}
          placeholder="bat_…"
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
          required
          autoFocus
        />
        {problem && <ProblemNotice problem={problem} />}
        <button type="submit" class="button-primary" disabled={busy || token.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p class="muted small">
          No token? The first one is printed when the server first starts; an admin can make more under Agents.
        </p>
      </form>
    </main>
  );
}
