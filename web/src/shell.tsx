import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { call } from './api.ts';
import { AgentPage } from './views/agent-page.tsx';
import { Agents } from './views/agents.tsx';
import { Activity } from './views/activity.tsx';
import { Approvals } from './views/approvals.tsx';
import { CommandPalette, ShortcutsDialog } from './views/palette.tsx';
import { Board } from './views/board.tsx';
import { DeadLetter } from './views/dead-letter.tsx';
import { Fleet } from './views/fleet.tsx';
import { Inbox } from './views/inbox.tsx';
import { InsightPage } from './views/insight.tsx';
import { useInboxUnread } from './inbox-count.ts';
import { TaskPage } from './views/task-page.tsx';
import type { FeedMode } from './live.ts';
import { Sessions } from './views/sessions.tsx';
import { Templates } from './views/templates.tsx';
import { Webhooks } from './views/webhooks.tsx';
import { Schedules } from './views/schedules.tsx';
import { onLinkClick, type Route, useRoute } from './router.ts';
import { can, useEvents, useSession } from './session.ts';
import type { Task } from './types.ts';
import { useShortcuts } from './hooks.ts';
import { RetryContext } from './components.tsx';
import { NewTaskDialog } from './views/new-task.tsx';
import { UndoHost } from './undo.tsx';
import { WorkspaceSwitcher } from './workspace-switcher.tsx';

const MODE_TEXT: Record<FeedMode, string> = { connecting: 'Connecting…', stream: 'Live', polling: 'Live (polling)', off: 'Live updates off' };

/** The number of pending approvals, kept current from approval.* events; a new one raises a browser notification when the user allowed them. */
function usePendingCount(): string | null {
  const { whoami } = useSession();
  const [count, setCount] = useState<string | null>(null);
  const refresh = () => {
    if (!can({ whoami }, 'approvals_list')) return;
    // One page: past 100 the badge says "100+".
    void call('approvals_list', { status: 'pending', limit: 100 }).then(
      (page) => setCount(page.data.length === 0 ? null : `${page.data.length}${page.has_more ? '+' : ''}`),
      () => undefined,
    );
  };
  useEffect(refresh, []);
  useEvents((event) => {
    if (!event.type.startsWith('approval.')) return;
    refresh();
    if (event.type === 'approval.requested' && typeof Notification !== 'undefined' && Notification.permission === 'granted' && event.actor.id !== whoami.principal.id) {
      const operation = typeof event.data.operation === 'string' ? event.data.operation : 'an operation';
      new Notification('Baton: approval requested', { body: `${operation} waits for a decision`, tag: event.subject });
    }
  });
  return count;
}

function useFeedMode(): FeedMode {
  const { feed } = useSession();
  const [mode, setMode] = useState(feed.mode);
  useEffect(() => {
    // The feed starts before the views (main.tsx), so its mode may have moved on since the first render.
    setMode(feed.mode);
    return feed.onMode(setMode);
  }, [feed]);
  return mode;
}

function NavLink({ href, current, children }: { href: string; current: boolean; children: preact.ComponentChildren }) {
  return (
    <a href={href} class="nav-link" aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}

function page(route: Route) {
  switch (route.page) {
    case 'board':
      return <Board search={route.search} />;
    case 'task':
      return <TaskPage id={route.id} />;
    case 'approvals':
      return <Approvals />;
    case 'inbox':
      return <Inbox />;
    case 'agents':
      return <Agents />;
    case 'agent':
      return <AgentPage id={route.id} />;
    case 'fleet':
      return <Fleet search={route.search} />;
    case 'insight':
      return <InsightPage search={route.search} />;
    case 'activity':
      return <Activity search={route.search} />;
    case 'dead-letter':
      return <DeadLetter />;
    case 'sessions':
      return <Sessions />;
    case 'templates':
      return <Templates />;
    case 'webhooks':
      return <Webhooks />;
    case 'schedules':
      return <Schedules />;
    case 'missing':
      return (
        <section class="page">
          <h1>Nothing here</h1>
          <p>
            This page does not exist. Go to the <a href="/">board</a>.
          </p>
        </section>
      );
  }
}

/** Header, navigation (with the approvals badge and live status) and the current page. */
export function Shell({ onSignOut }: { onSignOut: () => void }) {
  const { whoami } = useSession();
  const route = useRoute();
  const pending = usePendingCount();
  const unread = useInboxUnread();
  const mode = useFeedMode();
  const canCreate = can({ whoami }, 'tasks_create');
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<Task | null>(null);
  // Bumped by a page's Try again: the page remounts and loads everything afresh.
  const [attempt, setAttempt] = useState(0);
  const [palette, setPalette] = useState(false);
  const [keys, setKeys] = useState(false);
  useShortcuts({
    c: (event) => {
      if (!canCreate) return;
      event.preventDefault();
      setCreating(true);
    },
    '?': (event) => {
      event.preventDefault();
      setKeys(true);
    },
  });
  useEffect(() => {
    // Ctrl/Cmd+K works from anywhere, a field included (single-key shortcuts do not).
    const onKey = (event: KeyboardEvent) => {
      if (event.key.toLowerCase() !== 'k' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return;
      event.preventDefault();
      setPalette(true);
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, []);
  useEffect(() => {
    document.addEventListener('click', onLinkClick);
    return () => document.removeEventListener('click', onLinkClick);
  }, []);
  return (
    <UndoHost>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a href="/" class="brand" aria-label="Baton: the board">
          <span class="brand-mark" aria-hidden="true" /> <span class="brand-text">Baton</span>
        </a>
        <WorkspaceSwitcher />
        <nav class="nav" aria-label="Main">
          <NavLink href="/" current={route.page === 'board' || route.page === 'task'}>
            Board
          </NavLink>
          {can({ whoami }, 'inbox_list') && (
            <NavLink href="/inbox" current={route.page === 'inbox'}>
              Inbox
              {unread !== null && unread > 0 && (
                <span class="badge" aria-label={`${unread} unread`} data-testid="inbox-badge">
                  {unread}
                </span>
              )}
            </NavLink>
          )}
          <NavLink href="/approvals" current={route.page === 'approvals'}>
            Approvals
            {pending !== null && (
              <span class="badge" aria-label={`${pending} pending`} data-testid="approvals-badge">
                {pending}
              </span>
            )}
          </NavLink>
          {can({ whoami }, 'agents_list') && (
            <NavLink href="/agents" current={route.page === 'agents' || route.page === 'agent'}>
              Agents
            </NavLink>
          )}
          {can({ whoami }, 'agents_list') && can({ whoami }, 'leases_list') && (
            <NavLink href="/fleet" current={route.page === 'fleet'}>
              Fleet
            </NavLink>
          )}
          {can({ whoami }, 'insight_get') && (
            <NavLink href="/insight" current={route.page === 'insight'}>
              Insight
            </NavLink>
          )}
          {can({ whoami }, 'events_list') && (
            <NavLink href="/activity" current={route.page === 'activity'}>
              Activity
            </NavLink>
          )}
          {can({ whoami }, 'templates_instantiate') && (
            <NavLink href="/templates" current={route.page === 'templates'}>
              Templates
            </NavLink>
          )}
          {can({ whoami }, 'schedules_list') && (
            <NavLink href="/schedules" current={route.page === 'schedules'}>
              Schedules
            </NavLink>
          )}
          {can({ whoami }, 'tasks_requeue') && (
            <NavLink href="/dead-letter" current={route.page === 'dead-letter'}>
              Dead letter
            </NavLink>
          )}
          {can({ whoami }, 'webhooks_list') && (
            <NavLink href="/webhooks" current={route.page === 'webhooks'}>
              Webhooks
            </NavLink>
          )}
        </nav>
        <div class="topbar-end">
          {canCreate && (
            <button type="button" class="button-new" onClick={() => setCreating(true)} aria-keyshortcuts="c" title="New task (c)">
              <span aria-hidden="true">+</span> New task
            </button>
          )}
          <span class={`live live-${mode}`} role="status" title="How this page receives changes">
            {MODE_TEXT[mode]}
          </span>
          {whoami.principal.kind === 'human' ? (
            <a href="/sessions" class="who" title={`${whoami.principal.kind} ${whoami.principal.id}, machine ${whoami.token.machine}: your sessions and notifications`}>
              {whoami.principal.name}
            </a>
          ) : (
            <span class="who" title={`${whoami.principal.kind} ${whoami.principal.id}, machine ${whoami.token.machine}`}>
              {whoami.principal.name}
            </span>
          )}
          <button type="button" class="button-quiet" onClick={onSignOut}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {created && (
          <p class="notice notice-approved toast" role="status">
            Created <a href={`/tasks/${created.id}`}>{created.title}</a>.{' '}
            <button type="button" class="button-link" onClick={() => setCreated(null)}>
              Dismiss
            </button>
          </p>
        )}
        <RetryContext.Provider value={() => setAttempt((n) => n + 1)}>
          <Fragment key={attempt}>{page(route)}</Fragment>
        </RetryContext.Provider>
      </main>
      <CommandPalette open={palette} onClose={() => setPalette(false)} />
      <ShortcutsDialog open={keys} onClose={() => setKeys(false)} />
      {canCreate && (
        <NewTaskDialog
          open={creating}
          onClose={() => setCreating(false)}
          onCreated={(task) => {
            setCreating(false);
            setCreated(task);
          }}
        />
      )}
    </UndoHost>
  );
}
