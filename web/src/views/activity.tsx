import { useEffect, useRef, useState } from 'preact/hooks';
import { useNames } from '../directory.ts';
import type { InputOf } from '../../../src/client/index.ts';
import { call, type Problem, problemOf } from '../api.ts';
import { ActorChip, Loading, ProblemNotice } from '../components.tsx';
import { ago, exact } from '../format.ts';
import { useNow } from '../hooks.ts';
import { navigate } from '../router.ts';
import { useEvents } from '../session.ts';
import type { ActorKind, BatonEvent } from '../types.ts';
import { byWrite, describe, EventWords } from './timeline.tsx';
import { PrincipalPicker } from '../principal-picker.tsx';

/** The filters, kept in the address (`/activity?actor=…&kind=…&type=…&task=…`) so a view can be shared and reloaded. */
export interface ActivityFilters {
  actor: string;
  kind: '' | ActorKind;
  type: string;
  task: string;
}

const TYPES = [
  'task.created',
  'task.updated',
  'task.status_changed',
  'task.claimed',
  'task.handed_in',
  'task.attempt_failed',
  'lease.renewed',
  'lease.released',
  'lease.expired',
  'comment.created',
  'approval.requested',
  'approval.granted',
  'approval.denied',
  'agent.created',
  'token.created',
  'token.revoked',
];

export function parseFilters(search: string): ActivityFilters {
  const q = new URLSearchParams(search);
  const kind = q.get('kind') ?? '';
  return { actor: q.get('actor') ?? '', kind: kind === 'human' || kind === 'agent' || kind === 'system' ? kind : '', type: q.get('type') ?? '', task: q.get('task') ?? '' };
}

function query(filters: ActivityFilters): string {
  const q = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Whether a live event passes the filters (a page read from the server is filtered there, by the same four). */
function matches(event: BatonEvent, f: ActivityFilters): boolean {
  return (!f.actor || event.actor.id === f.actor) && (!f.kind || event.actor.kind === f.kind) && (!f.type || event.type === f.type) && (!f.task || event.subject === f.task);
}

/** Where a line links: the task for task, lease and comment events; the approvals or the principal otherwise. */
function href(event: BatonEvent): string | null {
  if (event.subject.startsWith('tsk_')) return `/tasks/${event.subject}`;
  if (event.subject.startsWith('apr_')) return '/approvals';
  if (event.subject.startsWith('agt_')) return `/agents/${event.subject}`;
  return null;
}

const PAGE = 100;
const MAX_SHOWN = 500;

/** Every event as it happens, newest first, filtered; each line links to its task. */
export function Activity({ search }: { search: string }) {
  const filters = parseFilters(search);
  const now = useNow(15_000);
  const [events, setEvents] = useState<BatonEvent[] | null>(null);
  const [older, setOlder] = useState<string | null>(null);
  const [titles, setTitles] = useState<Map<string, string>>(new Map());
  const [problem, setProblem] = useState<Problem | null>(null);

  const serverQuery = (cursor: string | null): InputOf<'events_list'> => ({
    order: 'desc',
    limit: PAGE,
    view: 'full',
    ...(filters.type ? { types: [filters.type] } : {}),
    ...(filters.task ? { subject: filters.task } : {}),
    ...(filters.actor ? { actor: filters.actor } : {}),
    ...(filters.kind ? { actor_kind: filters.kind } : {}),
    ...(cursor ? { cursor } : {}),
  });
  /** One page of events, or null when it could not be read (the problem is then shown with Try again). */
  const fetchPage = async (cursor: string | null) => {
    setProblem(null);
    try {
      const page = await call('events_list', serverQuery(cursor));
      setOlder(page.has_more ? page.next_cursor : null);
      return page.data as BatonEvent[];
    } catch (error) {
      setProblem(problemOf(error));
      return null;
    }
  };
  /** Live events that arrive while the newest page loads: the read may have been made before them. */
  const arrivedWhileLoading = useRef<BatonEvent[] | null>(null);
  const loads = useRef(0);
  const loadNewest = () => {
    setEvents(null);
    arrivedWhileLoading.current = [];
    const load = ++loads.current;
    void fetchPage(null).then((page) => {
      // A newer load (the filters changed again) owns the page now.
      if (load !== loads.current) return;
      const arrived = arrivedWhileLoading.current ?? [];
      arrivedWhileLoading.current = null;
      if (!page) return;
      const read = new Set(page.map((e) => e.id));
      setEvents([...arrived.filter((e) => !read.has(e.id)).reverse(), ...page].slice(0, MAX_SHOWN));
    });
  };
  const loadOlder = (cursor: string) => void fetchPage(cursor).then((page) => page && setEvents((current) => [...(current ?? []), ...page]));

  useEffect(loadNewest, [search]);
  // Titles for the tasks on screen, read once each.
  useEffect(() => {
    const missing = [...new Set((events ?? []).map((e) => e.subject).filter((s) => s.startsWith('tsk_') && !titles.has(s)))].slice(0, 50);
    if (missing.length === 0) return;
    // A deleted task cannot be read; its task.deleted (or task.created) event still names it.
    const named = (id: string) => {
      const title = events?.find((e) => e.subject === id && typeof e.data.title === 'string')?.data.title;
      return typeof title === 'string' ? title : undefined;
    };
    void Promise.all(missing.map((id) => call('tasks_get', { id }).then((t) => [id, t.title] as const, () => [id, named(id) ?? id] as const))).then((found) =>
      setTitles((current) => new Map([...current, ...found])),
    );
  }, [events]);
  // Live: the session's feed resumes from the last event it saw after a drop, so nothing is missed or repeated.
  useEvents((event) => {
    if (!matches(event, filters)) return;
    if (arrivedWhileLoading.current) {
      arrivedWhileLoading.current.push(event);
      return;
    }
    setEvents((current) => (current && !current.some((e) => e.id === event.id) ? [event, ...current].slice(0, MAX_SHOWN) : current));
  });

  const set = (change: Partial<ActivityFilters>) => navigate(`/activity${query({ ...filters, ...change })}`);
  // What is being typed in the task filter, until it is committed (Enter or leaving the field): a
  // live event re-renders the feed meanwhile, and must not put the committed value back in the field.
  const [taskDraft, setTaskDraft] = useState(filters.task);
  useEffect(() => setTaskDraft(filters.task), [filters.task]);
  const shown = events;
  // Principals an event is about (its subject), named by the directory for a caller who may not list them.
  const names = useNames((events ?? []).map((event) => event.subject));

  return (
    <section class="page" aria-labelledby="activity-title">
      <div class="page-head">
        <h1 id="activity-title">Activity</h1>
        <form class="filters activity-filters" aria-label="Filter events" onSubmit={(e) => e.preventDefault()}>
          <label class="sr-only" for="activity-actor">
            Actor
          </label>
          <PrincipalPicker id="activity-actor" value={filters.actor} onChange={(actor) => set({ actor })} fixed={[{ value: '', label: 'Anyone' }]} />
          <label class="sr-only" for="activity-kind">
            Kind
          </label>
          <select id="activity-kind" value={filters.kind} onChange={(e) => set({ kind: e.currentTarget.value as ActivityFilters['kind'] })}>
            <option value="">Any kind</option>
            <option value="human">Humans</option>
            <option value="agent">Agents</option>
            <option value="system">System</option>
          </select>
          <label class="sr-only" for="activity-type">
            Event type
          </label>
          <select id="activity-type" value={filters.type} onChange={(e) => set({ type: e.currentTarget.value })}>
            <option value="">Every event type</option>
            {(TYPES.includes(filters.type) || !filters.type ? TYPES : [filters.type, ...TYPES]).map((t) => (
              <option key={t} value={t}>
                {t}
              </option>
            ))}
          </select>
          <label class="sr-only" for="activity-task">
            Task id
          </label>
          <input
            id="activity-task"
            type="search"
            placeholder="Task id (tsk_…)"
            value={taskDraft}
            onInput={(e) => setTaskDraft(e.currentTarget.value)}
            onChange={(e) => set({ task: e.currentTarget.value.trim() })}
          />
          {search && (
            <button type="button" class="button-quiet" onClick={() => navigate('/activity')}>
              Clear
            </button>
          )}
        </form>
      </div>
      {problem && <ProblemNotice problem={problem} onRetry={events ? () => older && loadOlder(older) : loadNewest} onDismiss={() => setProblem(null)} />}
      {!shown && !problem && <Loading what="events" />}
      {shown && shown.length === 0 && <p class="empty">No events match{search ? ' these filters' : ' yet'}.</p>}
      {shown && shown.length > 0 && (
        <ol class="activity" aria-label="Events, newest first">
          {byWrite(shown, 'newest first').map(({ event, followed }) => {
            const link = href(event);
            const title = titles.get(event.subject);
            return (
              <li key={event.id} class={`activity-line event-by-${event.actor.kind}`} data-event-type={event.type} data-event-id={event.id}>
                <ActorChip actor={event.actor} />
                <span class="event-what">{describe(event)}</span>
                {link ? (
                  <a class="activity-subject" href={link}>
                    {event.subject.startsWith('tsk_') ? (title ?? event.subject) : event.subject.startsWith('apr_') ? 'Approvals' : (names.get(event.subject) ?? event.subject)}
                  </a>
                ) : (
                  <code class="activity-subject">{event.subject}</code>
                )}
                {typeof event.data.note === 'string' && <span class="event-note">“{event.data.note}”</span>}
                <EventWords event={event} inline />
                {followed.length > 0 && (
                  <span class="activity-also">
                    {followed.map((also, i) => (
                      <span key={also.id} data-event-type={also.type}>
                        {i > 0 ? '; ' : 'with it: '}
                        {describe(also)}
                      </span>
                    ))}
                  </span>
                )}
                <span class="event-meta">
                  <code>{[event, ...followed].map((e) => e.type).join(' · ')}</code>
                  {event.machine && ` · ${event.machine}`}
                </span>
                <time class="event-time" dateTime={event.created_at} title={exact(event.created_at)}>
                  {ago(event.created_at, now)}
                </time>
              </li>
            );
          })}
        </ol>
      )}
      {older && shown && (
        <button type="button" class="button" onClick={() => loadOlder(older)}>
          Older events
        </button>
      )}
    </section>
  );
}
