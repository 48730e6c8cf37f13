import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ApiProblem, get, getAll, getToken, handleUnauthorized, type Problem, setToken } from './api.ts';
import { Feed } from './live.ts';
import { can, SessionContext, type Session } from './session.ts';
import { Shell } from './shell.tsx';
import { SignIn } from './sign-in.tsx';
import type { Agent, Manifest, Whoami } from './types.ts';
import './styles.css';

async function openSession(token: string): Promise<Session> {
  const whoami = await get<Whoami>('/whoami', token);
  setToken(token);
  const manifest = (await (await fetch('/api/v1')).json()) as Manifest;
  const names = new Map<string, string>([[whoami.principal.id, whoami.principal.name]]);
  if (can({ whoami }, 'agents_list')) {
    for (const agent of (await getAll<Agent>('/agents')).data) names.set(agent.id, agent.name);
  }
  const feed = new Feed();
  // Principals made or renamed while the app is open are named too (this listener runs before the views').
  feed.subscribe((event) => {
    const rename = (event.data.changes as { name?: { to?: unknown } } | undefined)?.name?.to;
    const name = event.type === 'agent.created' ? event.data.name : event.type === 'agent.updated' ? rename : undefined;
    if (typeof name === 'string') names.set(event.subject, name);
  });
  feed.start();
  return { whoami, feed, manifest, names };
}

function App() {
  const [session, setSession] = useState<Session | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [checking, setChecking] = useState(() => getToken() !== null);

  const signIn = async (token: string) => {
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
  };

  useEffect(() => {
    handleUnauthorized((p) => signOut({ ...p, title: 'You have been signed out: this token is no longer accepted' }));
    const stored = getToken();
    if (stored) void signIn(stored).finally(() => setChecking(false));
  }, []);

  if (checking) return <p class="loading">Signing in…</p>;
  if (!session) return <SignIn onSubmit={signIn} problem={problem} />;
  return (
    <SessionContext.Provider value={session}>
      <Shell onSignOut={() => signOut(null)} />
    </SessionContext.Provider>
  );
}

const root = document.getElementById('app');
if (root) render(<App />, root);
