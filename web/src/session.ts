import { createContext } from 'preact';
import { useContext, useEffect, useRef } from 'preact/hooks';
import type { Directory } from './directory.ts';
import type { Feed } from './live.ts';
import type { BatonEvent, Manifest, Whoami } from './types.ts';

/** What every signed-in view shares: who is signed in, the live feed, the manifest, names of principals. */
export interface Session {
  whoami: Whoami;
  feed: Feed;
  manifest: Manifest;
  /** Principal id → name, for the principals named so far (ids are shown otherwise): `directory.names`. */
  names: Map<string, string>;
  /** Names the ids a view shows (`useNames`), for this page load. */
  directory: Directory;
}

export const SessionContext = createContext<Session | null>(null);

export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in view');
  return session;
}

/** Calls `handler` for every live event while the component is mounted. */
export function useEvents(handler: (event: BatonEvent) => void): void {
  const { feed } = useSession();
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => feed.subscribe((event) => latest.current(event)), [feed]);
}

/**
 * Whether this token may call an operation. Names are compared with `.` and `_` treated alike, so
 * the app reads `tasks_create` and `tasks_create` style names the same.
 */
export function can(session: Pick<Session, 'whoami'>, operation: string): boolean {
  const wanted = operation.replace(/\./g, '_');
  return session.whoami.can.some((name) => name.replace(/\./g, '_') === wanted);
}
