import { ActorChip } from '../components.tsx';
import { STATUS_LABEL, ago, exact, firstWords } from '../format.ts';
import { markdownText } from '../markdown.tsx';
import type { BatonEvent, Status } from '../types.ts';

const status = (value: unknown) => STATUS_LABEL[value as Status] ?? String(value);

/** One event in words: what the actor did, from its type and data (/spec/domain-model.md#event-types). */
export function describe(event: BatonEvent): string {
  const d = event.data;
  switch (event.type) {
    case 'task.created':
      return 'created the task';
    case 'task.updated':
      return edited(d.changes as Record<string, { from: unknown; to: unknown }> | undefined);
    case 'task.status_changed':
      return `moved it from ${status(d.from)} to ${status(d.to)}${typeof d.reason === 'string' ? ` (${d.reason.replace(/_/g, ' ')})` : ''}`;
    case 'task.claimed':
      return d.reason === 'changes_requested' ? `gave the last holder a new lease (epoch ${String(d.epoch)}) to make the changes` : `claimed it (lease epoch ${String(d.epoch)}, ${String(d.ttl_s)} s)`;
    case 'task.deleted':
      return 'deleted the task';
    case 'lease.renewed':
      return 'sent a heartbeat';
    case 'lease.released':
      return d.reason === 'status_changed' ? 'ended the lease by changing the status' : 'released the lease';
    case 'lease.expiring':
      return 'warned that the lease is about to run out';
    case 'lease.expired':
      return 'expired the lease (no heartbeat in time)';
    case 'run.logged':
      return `logged ${String(d.lines)} ${d.lines === 1 ? 'line' : 'lines'}${d.level === 'info' ? '' : ` (${String(d.level)})`}`;
    case 'task.handed_in':
      return 'handed it in for review';
    case 'task.changes_requested':
      return 'requested changes';
    case 'task.assigned':
      return 'assigned it';
    case 'task.requeued':
      return 'put it back in the queue';
    case 'task.attempt_failed':
      return `failed attempt ${String(d.attempt)} of ${String(d.max_attempts)}${typeof d.reason === 'string' ? `: ${d.reason}` : ''}`;
    case 'task.dead_lettered':
      return 'took it out of the queue: attempts exhausted';
    case 'comment.created':
      return 'commented';
    case 'comment.updated':
      return 'edited a comment';
    case 'comment.deleted':
      return 'deleted a comment';
    case 'approval.requested':
      return `asked for approval to run ${String(d.operation)}`;
    case 'approval.granted':
      return `approved ${String(d.operation)}${d.outcome === 'failed' ? ' (it failed)' : ''}`;
    case 'approval.denied':
      return `denied ${String(d.operation)}`;
    case 'agent.created':
      return 'added a principal';
    case 'agent.updated':
      return 'changed a principal';
    case 'token.created':
      return 'created a token';
    case 'token.revoked':
      return 'revoked a token';
    case 'webhook.created':
    case 'webhook.updated':
    case 'webhook.deleted':
      return `${event.type.slice(8)} a webhook`;
    case 'comment.mentioned':
      return 'mentioned';
    case 'ask.created':
      return 'asked a question';
    case 'ask.answered':
      return 'answered a question';
    case 'ask.defaulted':
      return 'applied the default answer (no answer in time)';
    case 'ask.cancelled':
      return 'cancelled a question';
    case 'ask.escalated':
      return 'passed a question on (no answer in time)';
    case 'ask.overdue':
      return 'marked a question overdue';
    case 'task.overdue':
      return 'marked it overdue';
    case 'task.review_overdue':
      return 'marked its review overdue';
    case 'approval.overdue':
      return 'marked an approval overdue';
    case 'artifact.created':
      return typeof d.name === 'string' ? `attached “${d.name}”` : 'attached an artifact';
    case 'reservation.acquired':
      return `reserved ${typeof d.resource === 'string' ? d.resource : `${String(d.repo)}: ${Array.isArray(d.paths) ? d.paths.join(', ') : ''}`} (${String(d.mode)})`;
    case 'reservation.released':
      return 'released a reservation';
    case 'reservation.expired':
      return d.reason === 'lease_ended' ? 'ended a reservation (its lease ended)' : 'ended a reservation (it expired)';
    case 'budget.created':
      return `created the budget “${String(d.name)}”`;
    case 'budget.updated':
      return 'changed a budget';
    case 'budget.deleted':
      return `deleted the budget “${String(d.name)}”`;
    case 'budget.warning':
      return `warned: the budget “${String(d.name)}” is past 80 %`;
    case 'budget.exhausted':
      return `stopped claims: the budget “${String(d.name)}” is spent`;
    default:
      return event.type;
  }
}

/** An edit in words: the fields it changed, and an archive or unarchive as such ("archived it"). */
function edited(changes: Record<string, { from: unknown; to: unknown }> | undefined): string {
  const fields = Object.keys(changes ?? {}).filter((field) => field !== 'archived_at');
  const archive = changes?.archived_at;
  const parts = [fields.length > 0 ? `changed ${fields.join(', ')}` : '', archive ? (archive.to === null ? 'unarchived it' : 'archived it') : ''].filter(Boolean);
  return parts.join(' and ') || 'changed the task';
}

/** One changed field of a `task.updated` event, in words; a long text's before and after go behind a disclosure. */
interface ChangeLine {
  field: string;
  text: string;
  before?: string;
  after?: string;
}

const quoted = (value: unknown) => (value === null || value === undefined || value === '' ? 'none' : `“${typeof value === 'string' ? value : JSON.stringify(value)}”`);
const when = (value: unknown) => (typeof value === 'string' ? exact(value) : 'none');
/** Past this, or over one line, a text's before and after are shown only on request. */
const SHORT_TEXT = 80;

/** `added “a”, removed “b”` for list fields (labels, blocked_by), whose events carry whole lists. */
function listChange(from: unknown, to: unknown): string {
  const before = Array.isArray(from) ? from.map(String) : [];
  const after = Array.isArray(to) ? to.map(String) : [];
  const added = after.filter((v) => !before.includes(v)).map(quoted);
  const removed = before.filter((v) => !after.includes(v)).map(quoted);
  return [added.length > 0 ? `added ${added.join(', ')}` : '', removed.length > 0 ? `removed ${removed.join(', ')}` : ''].filter(Boolean).join('; ') || 'reordered';
}

function changeLine(field: string, from: unknown, to: unknown): ChangeLine {
  const name = field.replace(/_/g, ' ');
  if (field === 'labels' || field === 'blocked_by') return { field, text: `${name}: ${listChange(from, to)}` };
  if (field === 'due_at' || field === 'not_before') return { field, text: `${name}: ${when(from)} → ${when(to)}` };
  const before = typeof from === 'string' ? from : '';
  const after = typeof to === 'string' ? to : '';
  const long = (text: string) => text.length > SHORT_TEXT || text.includes('\n');
  if (long(before) || long(after)) {
    const text = before === '' ? `added a ${name}` : after === '' ? `removed the ${name}` : `edited the ${name}`;
    return { field, text: `${text} (${before.length.toLocaleString('en')} → ${after.length.toLocaleString('en')} characters)`, before, after };
  }
  return { field, text: `${name}: ${quoted(from)} → ${quoted(to)}` };
}

function changes(event: BatonEvent): ChangeLine[] {
  const list = event.data.changes as Record<string, { from: unknown; to: unknown }> | undefined;
  if (event.type !== 'task.updated' || !list) return [];
  // An archive is said in the event's line ("archived it").
  return Object.entries(list)
    .filter(([field]) => field !== 'archived_at')
    .map(([field, { from, to }]) => changeLine(field, from, to));
}

/** One write's events: the one that says what it was (`task.handed_in`), then what came with it (the status change, the lease's end). */
export interface Write {
  event: BatonEvent;
  followed: BatonEvent[];
}

/**
 * How well an event says what its write was: 0 for the write's own act (a claim, a hand-in, an
 * edit), then the status change, then consequences (a lease ended, an attempt counted, an
 * assignment, the lease a review hands back), then a comment that came with it.
 */
function headlineRank(event: BatonEvent): number {
  if (event.type === 'comment.created') return 3;
  if (['lease.released', 'task.attempt_failed', 'task.dead_lettered', 'task.assigned'].includes(event.type)) return 2;
  if (event.type === 'task.claimed' && event.data.reason === 'changes_requested') return 2;
  return event.type === 'task.status_changed' ? 1 : 0;
}

/**
 * Groups the events one write appended: neighbours with the same actor, subject and instant (a
 * write reads the clock once, so its events share `created_at`). Lists newest first (the activity
 * feed) are grouped the same way. The headline is the event that best says what the write was;
 * the others follow in the order the write appended them.
 */
export function byWrite(events: BatonEvent[], order: 'oldest first' | 'newest first'): Write[] {
  const groups: BatonEvent[][] = [];
  for (const event of events) {
    const group = groups.at(-1);
    const last = group?.at(-1);
    if (group && last && last.actor.id === event.actor.id && last.subject === event.subject && last.created_at === event.created_at) group.push(event);
    else groups.push([event]);
  }
  return groups.flatMap((group) => {
    const appended = order === 'newest first' ? group.reverse() : group;
    const event = appended.reduce<BatonEvent | undefined>((best, e) => (best === undefined || headlineRank(e) < headlineRank(best) ? e : best), undefined);
    return event ? [{ event, followed: appended.filter((e) => e !== event) }] : [];
  });
}

/** The words an event carries, quoted by their first words: a comment's body, an ask's question, an answer (the option chosen, else the text). */
function wordsOf(event: BatonEvent): string | null {
  const d = event.data;
  if (event.type === 'comment.created' && typeof d.body === 'string') return `“${firstWords(markdownText(d.body))}”`;
  if (event.type === 'ask.created' && typeof d.question === 'string') return `“${firstWords(markdownText(d.question))}”`;
  if (event.type !== 'ask.answered' && event.type !== 'ask.defaulted') return null;
  const answer = d.answer as { text?: unknown; option?: unknown } | undefined;
  const said = answer?.option ?? answer?.text;
  return typeof said === 'string' && said !== '' ? `Answer: “${firstWords(markdownText(said))}”` : null;
}

/** An event's words (`wordsOf`) as its note, a `span` on a line of text or else a `p`; nothing when it carries none. */
export function EventWords({ event, inline = false }: { event: BatonEvent; inline?: boolean }) {
  const words = wordsOf(event);
  if (!words) return null;
  return inline ? <span class="event-note">{words}</span> : <p class="event-note">{words}</p>;
}

/** What one event adds below its line: a heartbeat's note, an edit's changes. */
function Details({ event }: { event: BatonEvent }) {
  return (
    <>
      {typeof event.data.note === 'string' && <p class="event-note">“{event.data.note}”</p>}
      <EventWords event={event} />
      {changes(event).map((line) =>
        line.before === undefined ? (
          <p key={line.field} class="event-change">
            {line.text}
          </p>
        ) : (
          <details key={line.field} class="event-change">
            <summary>{line.text}</summary>
            <div class="event-texts">
              <p class="small muted">Before</p>
              <pre data-side="before">{line.before || '(empty)'}</pre>
              <p class="small muted">After</p>
              <pre data-side="after">{line.after || '(empty)'}</pre>
            </div>
          </details>
        ),
      )}
    </>
  );
}

/** The task's events, oldest first, one entry per write; human, agent and system actors are visibly distinct. */
export function Timeline({ events, now }: { events: BatonEvent[]; now: number }) {
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol class="timeline" aria-label="Event timeline">
      {byWrite(events, 'oldest first').map(({ event, followed }) => (
        <li key={event.id} class={`event event-by-${event.actor.kind}`} data-event-type={event.type}>
          <div class="event-line">
            <ActorChip actor={event.actor} />
            <span class="event-what">{describe(event)}</span>
            <time class="event-time" dateTime={event.created_at} title={exact(event.created_at)}>
              {ago(event.created_at, now)}
            </time>
          </div>
          <Details event={event} />
          {followed.length > 0 && (
            <ul class="event-also" aria-label="With it">
              {followed.map((also) => (
                <li key={also.id} data-event-type={also.type}>
                  {describe(also)}
                  <Details event={also} />
                </li>
              ))}
            </ul>
          )}
          <p class="event-meta">
            <code>{[event, ...followed].map((e) => e.type).join(' · ')}</code>
            {event.machine && <span> · machine {event.machine}</span>}
          </p>
        </li>
      ))}
    </ol>
  );
}
