import { useState } from 'preact/hooks';
import type { AuthState, Problem } from './api.ts';
import { ProblemNotice } from './components.tsx';

/** Where single sign-on returns to: the page the person asked for (a path on this server). */
function loginHref(loginUrl: string): string {
  return `${loginUrl}?return_to=${encodeURIComponent(location.pathname + location.search + location.hash)}`;
}

/**
 * "Sign in with <provider>" when single sign-on is configured (a cookie session: every tab and
 * shared link is signed in); and, unless the server requires single sign-on, paste a token, kept
 * in sessionStorage for this tab only and sent as a bearer header.
 */
export function SignIn({ onSubmit, problem, oidc }: { onSubmit: (token: string) => Promise<void>; problem: Problem | null; oidc: AuthState['oidc'] }) {
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
        {oidc && (
          <a class="button-primary sso-button" href={loginHref(oidc.login_url)}>
            Sign in with {oidc.name}
          </a>
        )}
        {oidc?.required ? (
          problem && <ProblemNotice problem={problem} />
        ) : (
          <TokenFields token={token} setToken={setToken} busy={busy} problem={problem} sso={oidc !== null} />
        )}
      </form>
    </main>
  );
}

function TokenFields({ token, setToken, busy, problem, sso }: { token: string; setToken: (t: string) => void; busy: boolean; problem: Problem | null; sso: boolean }) {
  return (
    <>
        <p class="muted">{sso ? 'Or sign in' : 'Sign in'} with your Baton token. It stays in this tab only and is forgotten when you close it.</p>
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
          autoFocus={!sso}
        />
        {problem && <ProblemNotice problem={problem} />}
        <button type="submit" class="button-primary" disabled={busy || token.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        <p class="muted small">
          No token? The first one is printed when the server first starts (or, when its output is not a terminal, written to bootstrap-admin-token beside its data directory); an admin can make more under Agents.
        </p>
    </>
  );
}
