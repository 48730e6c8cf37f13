import { useEffect, useRef, useState } from 'preact/hooks';
import { call, newKey, type Problem, problemOf } from '../api.ts';
import { Loading, ProblemNotice } from '../components.tsx';
import { useNow, useShortcuts } from '../hooks.ts';
import { INBOX_CHANGED, type InboxItem, type InboxPage, notifyWanted, setNotifyWanted, touchesInbox } from '../inbox-count.ts';
import { navigate } from '../router.ts';
import { can, useEvents, useSession } from '../session.ts';
import type { Task } from '../types.ts';
import { type Entry, InboxEntry, KIND_LABEL, taskOf } from './inbox-items.tsx';
import '../bulk-inbox.css';

type Show = 'unread' | 'all' | 'done';
type Kind = '' | keyof typeof KIND_LABEL;
const SHOW: Record<Show, string> = { unread: 'Unread', all: 'All', done: 'Done' };
const STATES: Record<Show, InboxItem['state'][]> = { unread: ['unread'], all: ['unread', 'read', 'done'], done: ['done'] };

interface Loaded {
  entries: Entry[];
  more: boolean;
  counts: InboxPage['counts'];
}

/**
 * Reads what the filters show: the person's inbox items (inbox_list) and, unless Done is shown,
 * what waits on their decision: pending approvals (all of them, also those of no task, which are
 * not items) and work in review.
 */
/** A task in review as the inbox shows it: the list's compact members and what was handed in. */
const REVIEW_FIELDS = ['id', 'title', 'status', 'priority', 'labels', 'version', 'lease', 'waiting_on', 'review_overdue', 'updated_at', 'legal_transitions', 'handoff'] as const;

async function load(show: Show, kind: Kind, may: { approvals: boolean; reviews: boolean }): Promise<Loaded> {
  const itemKind = kind === 'approval' || kind === 'to_review' ? null : kind;
  const waiting = show !== 'done';
  const [inbox, approvals, reviews] = await Promise.all([
    itemKind === null
      ? call('inbox_list', { state: ['unread'], limit: 1 }).then((p) => ({ ...p, data: [] }))
      : call('inbox_list', { state: STATES[show], ...(itemKind ? { kind: [itemKind] } : {}), limit: 100 }),
    waiting && may.approvals && (kind === '' || kind === 'approval') ? call('approvals_list', { status: 'pending', limit: 100 }) : null,
    waiting && may.reviews && (kind === '' || kind === 'to_review') ? call('tasks_list', { status: ['in_review'], limit: 100, fields: [...REVIEW_FIELDS] }) : null,
  ]);
  const entries: Entry[] = [
    // An approval's or a review's own item is shown as the approval or the task itself while those are listed (decided in place).
    ...inbox.data.filter((item) => !(approvals && item.kind === 'approval') && !(reviews && item.kind === 'to_review')).map((item) => ({ kind: 'item' as const, id: item.id, at: item.created_at, item })),
    ...(approvals?.data ?? []).map((approval) => ({ kind: 'approval' as const, id: approval.id, at: approval.created_at, approval })),
    ...((reviews?.data ?? []) as Task[]).map((task) => ({ kind: 'review' as const, id: task.id, at: task.updated_at, task })),
  ].sort((a, b) => b.at.localeCompare(a.at));
  return { entries, more: inbox.has_more || approvals?.has_more === true || reviews?.has_more === true, counts: inbox.counts };
}

/** Browser notifications of new inbox items, on for this browser once allowed. */
function NotifyToggle() {
  const supported = typeof Notification !== 'undefined';
  const [on, setOn] = useState(() => supported && notifyWanted() && Notification.permission === 'granted');
  if (!supported) return null;
  return (
    <label class="select-line small">
      <input
        type="checkbox"
        checked={on}
        onChange={(e) => {
          const wanted = e.currentTarget.checked;
          if (!wanted) {
            setNotifyWanted(false);
            setOn(false);
            return;
          }
          void Notification.requestPermission().then((permission) => {
            setNotifyWanted(permission === 'granted');
            setOn(permission === 'granted');
          });
        }}
      />
      Notify me of new items
    </label>
  );
}

/**
 * The inbox: asks answered with their options or free text, approvals and reviews decided in place,
 * mentions, answers and assignments; read/unread/done; filters by state and kind; `j`/`k` move,
 * Enter opens the task, `e` marks the focused item done; live from the stream.
 */
export function Inbox() {
  const session = useSession();
  const may = { approvals: can(session, 'approvals_approve'), reviews: can(session, 'tasks_review') };
  const now = useNow(30_000);
  const [show, setShow] = useState<Show>('unread');
  const [kind, setKind] = useState<Kind>('');
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [markProblem, setMarkProblem] = useState<Problem | null>(null);
  const [focused, setFocused] = useState<string | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const reads = useRef(0);

  const refresh = () => {
    const read = ++reads.current;
    load(show, kind, may).then(
      (next) => {
        // Only the latest read lands: a slow answer to older filters never overwrites newer ones.
        if (read !== reads.current) return;
        setLoaded(next);
        setProblem(null);
      },
      (error: unknown) => read === reads.current && setProblem(problemOf(error)),
    );
  };
  useEffect(refresh, [show, kind]);
  useEvents((event) => {
    if (touchesInbox(event)) refresh();
  });

  const mark = async (items: InboxItem[], state: InboxItem['state']) => {
    if (items.length === 0) return;
    setMarkProblem(null);
    try {
      await call('inbox_mark', { ids: items.map((i) => i.id), state }, { key: newKey() });
      setAnnouncement(items.length === 1 ? `Marked ${state}.` : `Marked ${items.length} items ${state}.`);
      dispatchEvent(new Event(INBOX_CHANGED));
      refresh();
    } catch (error) {
      setMarkProblem(problemOf(error));
    }
  };

  const entries = loaded?.entries ?? [];
  const ids = entries.map((e) => e.id);
  const focus = (id: string | undefined) => {
    if (!id) return;
    setFocused(id);
    document.querySelector<HTMLElement>(`[data-entry="${CSS.escape(id)}"] .inbox-link`)?.focus();
  };
  const step = (by: number, event: KeyboardEvent) => {
    if (ids.length === 0) return;
    event.preventDefault();
    const at = focused ? ids.indexOf(focused) : -1;
    focus(at < 0 ? ids[0] : ids[Math.max(0, Math.min(ids.length - 1, at + by))]);
  };
  const current = entries.find((e) => e.id === focused);
  useShortcuts({
    j: (event) => step(1, event),
    k: (event) => step(-1, event),
    Enter: (event) => {
      if ((event.target as Element).closest('a, button, summary') || !current) return;
      const task = taskOf(current);
      if (!task) return;
      event.preventDefault();
      if (current.kind === 'item' && current.item.state === 'unread') void mark([current.item], 'read');
      navigate(`/tasks/${task}`);
    },
    e: (event) => {
      if (current?.kind !== 'item' || current.item.state === 'done') return;
      event.preventDefault();
      const next = ids[ids.indexOf(current.id) + 1] ?? ids[ids.indexOf(current.id) - 1];
      void mark([current.item], 'done').then(() => next && requestAnimationFrame(() => focus(next)));
    },
  });

  const unreadShown = entries.flatMap((e) => (e.kind === 'item' && e.item.state === 'unread' ? [e.item] : []));
  return (
    <section
      class="page"
      aria-labelledby="inbox-title"
      onFocusIn={(e) => {
        const id = (e.target as Element).closest('[data-entry]')?.getAttribute('data-entry');
        if (id) setFocused(id);
      }}
    >
      <div class="page-head">
        <h1 id="inbox-title">Inbox</h1>
        <NotifyToggle />
        <p class="muted page-lede">
          What waits on you: questions, decisions, mentions and assignments. <kbd>j</kbd> <kbd>k</kbd> move · <kbd>Enter</kbd> open · <kbd>e</kbd> done
        </p>
      </div>
      <div class="inbox-filters">
        <div class="tabs" role="group" aria-label="Show">
          {(Object.keys(SHOW) as Show[]).map((s) => (
            <button key={s} type="button" class="tab" aria-pressed={show === s} onClick={() => setShow(s)}>
              {SHOW[s]}
              {loaded && s !== 'all' ? ` (${loaded.counts[s]})` : ''}
            </button>
          ))}
        </div>
        <label class="select-line">
          Kind
          <select value={kind} onChange={(e) => setKind(e.currentTarget.value as Kind)}>
            <option value="">All kinds</option>
            {(Object.keys(KIND_LABEL) as (keyof typeof KIND_LABEL)[]).map((k) => (
              <option key={k} value={k}>
                {KIND_LABEL[k]}
              </option>
            ))}
          </select>
        </label>
        {unreadShown.length > 1 && (
          <button type="button" class="button-quiet" onClick={() => void mark(unreadShown, 'read')}>
            Mark all read
          </button>
        )}
      </div>
      <p class="muted" role="status" aria-live="polite" data-testid="inbox-status">
        {announcement}
      </p>
      {markProblem && <ProblemNotice problem={markProblem} onDismiss={() => setMarkProblem(null)} />}
      {problem && <ProblemNotice problem={problem} onRetry={refresh} />}
      {!loaded && !problem && <Loading what="your inbox" />}
      {loaded && entries.length === 0 && <p class="empty">{show === 'done' ? 'Nothing marked done yet.' : 'Nothing waits on you. New asks, mentions and decisions show here as they come.'}</p>}
      <ul class="inbox-list" aria-label="Inbox items">
        {entries.map((entry) => (
          <InboxEntry key={entry.id} entry={entry} focused={entry.id === focused} now={now} onChanged={(what) => {
              setAnnouncement(what);
              refresh();
            }} onMark={(item, state) => void mark([item], state)} />
        ))}
      </ul>
      {loaded?.more && <p class="muted">These are the newest 100 of each; more wait behind them.</p>}
    </section>
  );
}
