import { useEffect, useState } from 'preact/hooks';

/** Client routes; the server answers each of these paths with index.html (src/adapters/web.ts). */
export type Route =
  | { page: 'board'; search: string }
  | { page: 'task'; id: string }
  | { page: 'approvals' }
  | { page: 'inbox' }
  | { page: 'agents' }
  | { page: 'agent'; id: string }
  | { page: 'fleet'; search: string }
  | { page: 'insight'; search: string }
  | { page: 'activity'; search: string }
  | { page: 'dead-letter' }
  | { page: 'sessions' }
  | { page: 'templates' }
  | { page: 'webhooks' }
  | { page: 'schedules' }
  | { page: 'missing' };

export function parseRoute(path: string, search = ''): Route {
  if (path === '/' || path === '') return { page: 'board', search };
  if (path === '/fleet') return { page: 'fleet', search };
  if (path === '/insight') return { page: 'insight', search };
  if (path === '/activity') return { page: 'activity', search };
  if (path === '/dead-letter') return { page: 'dead-letter' };
  if (path === '/approvals') return { page: 'approvals' };
  if (path === '/inbox') return { page: 'inbox' };
  if (path === '/agents') return { page: 'agents' };
  if (path === '/sessions') return { page: 'sessions' };
  if (path === '/templates') return { page: 'templates' };
  if (path === '/webhooks') return { page: 'webhooks' };
  if (path === '/schedules') return { page: 'schedules' };
  const task = /^\/tasks\/([\w-]+)$/.exec(path);
  if (task?.[1]) return { page: 'task', id: task[1] };
  const agent = /^\/agents\/([\w-]+)$/.exec(path);
  if (agent?.[1]) return { page: 'agent', id: agent[1] };
  return { page: 'missing' };
}

/** Goes to `path` (which may carry a query string) without reloading. */
export function navigate(path: string): void {
  if (location.pathname + location.search === path) return;
  history.pushState(null, '', path);
  dispatchEvent(new PopStateEvent('popstate'));
}

/** The current route, following pushState navigation and the back button. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.pathname, location.search));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.pathname, location.search));
    addEventListener('popstate', update);
    return () => removeEventListener('popstate', update);
  }, []);
  return route;
}

/** Same-origin links navigate in place; modifier clicks keep their usual meaning (new tab…). */
export function onLinkClick(event: MouseEvent): void {
  const anchor = (event.target as Element).closest('a');
  if (!anchor || event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const url = new URL(anchor.href);
  if (url.origin !== location.origin || anchor.target || !/^\/(tasks|agents|approvals|inbox|fleet|insight|activity|dead-letter|templates|webhooks|schedules)?(\/|$)/.test(url.pathname)) return;
  event.preventDefault();
  navigate(url.pathname + url.search);
}
