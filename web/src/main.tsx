import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiProblem, type AuthState, call, endCookieSession, getToken, handleUnauthorized, type Problem, readAuthState, readManifest, setToken } from './api.ts';
import { Directory } from './directory.ts';
import { Feed } from './live.ts';
import { can, SessionContext, type Session } from './session.ts';
import { Shell } from './shell.tsx';
import { SignIn } from './sign-in.tsx';
import './styles.css';

/** Opens the app with a pasted token, or with the session cookie when `token` is null. */
async function openSession(token: string | null): Promise<Session> {
  const whoami = await call('whoami', {}, token ? { token } : {});
  if (token) setToken(token);
  const names = new Map<string, string>([[whoami.principal.id, whoami.principal.name]]);
  const feed = new Feed();
  // Principals made or renamed while the app is open are named too (this listener runs before the views').
  feed.subscribe((event) => {
    const rename = (event.data.changes as { name?: { to?: unknown } } | undefined)?.name?.to;
    const name = event.type === 'agent.created' ? event.data.name : event.type === 'agent.updated' ? rename : undefined;
    if (typeof name === 'string') names.set(event.subject, name);
  });
  // The feed's start is read before any view (or the names below) reads its state, so no change after that state is missed.
  const [manifest] = await Promise.all([readManifest(token ?? undefined), feed.start()]);
  const directory = new Directory(names, can({ whoami }, 'directory_list'));
  // The newest hundred principals are named at once; the pickers find any other by the start of its
  // name, and any other id on screen is named when shown. Never the whole workspace: a fleet has thousands.
  if (can({ whoami }, 'directory_list')) {
    for (const entry of (await call('directory_list', { limit: 100 })).data) if (!entry.disabled) directory.learn(entry.id, entry.name, entry);
  } else if (can({ whoami }, 'agents_list')) {
    for (const agent of (await call('agents_list', { limit: 100 })).data) if (!agent.disabled) directory.learn(agent.id, agent.name, agent);
  }
  return { whoami, feed, manifest, names, directory };
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [checking, setChecking] = useState(true);
  const [auth, setAuth] = useState<AuthState | null>(null);

  const signIn = async (token: string | null) => {
    try {
      setSession(await openSession(token));
      setProblem(null);
    } catch (error) {
      setToken(null);
      setProblem(error instanceof ApiProblem ? error.problem : { code: 'network', title: 'Sign-in failed', status: 0, detail: String(error) });
    }
  };
  const signOut = (why: Problem | null) => {
    setSession((current) => {
      current?.feed.stop();
      return null;
    });
    setToken(null);
    setProblem(why);
    // The cookie session ends on the server too; then the sign-in page learns it is gone.
    void endCookieSession().then(readAuthState).then(setAuth);
  };

  useEffect(() => {
    handleUnauthorized((p) => signOut({ ...p, title: 'You have been signed out: this session or token is no longer accepted' }));
    const stored = getToken();
    void readAuthState()
      .then(async (state) => {
        setAuth(state);
        if (stored) await signIn(stored);
        else if (state.session) await signIn(null);
      })
      .finally(() => setChecking(false));
  }, []);

  if (checking) return <p class="loading">Signing in…</p>;
  if (!session) return <SignIn onSubmit={signIn} problem={problem} oidc={auth?.oidc ?? null} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell onSignOut={() => signOut(null)} />
    </SessionContext.Provider>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
