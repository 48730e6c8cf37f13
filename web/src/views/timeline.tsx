import { ActorChip } from '../components.tsx';
import { STATUS_LABEL, ago, exact } from '../format.ts';
import type { BatonEvent, Status } from '../types.ts';

const status = (value: unknown) => STATUS_LABEL[value as Status] ?? String(value);

/** One event in words: what the actor did, from its type and data (/spec/domain-model.md#event-types). */
export function describe(event: BatonEvent): string {
  const d = event.data;
  switch (event.type) {
    case 'task.created':
      return 'created the task';
    case 'task.updated':
      return `changed ${Object.keys((d.changes as object | undefined) ?? {}).join(', ') || 'the task'}`;
    case 'task.status_changed':
      return `moved it from ${status(d.from)} to ${status(d.to)}${typeof d.reason === 'string' ? ` (${d.reason.replace(/_/g, ' ')})` : ''}`;
    case 'task.claimed':
      return d.reason === 'changes_requested' ? `requested changes; a new lease (epoch ${String(d.epoch)}) went back to the last holder` : `claimed it (lease epoch ${String(d.epoch)}, ${String(d.ttl_s)} s)`;
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
    default:
      return event.type;
  }
}

function changes(event: BatonEvent): string[] {
  const list = event.data.changes as Record<string, { from: unknown; to: unknown }> | undefined;
  if (event.type !== 'task.updated' || !list) return [];
  return Object.entries(list).map(([field, { from, to }]) => `${field}: ${JSON.stringify(from)} → ${JSON.stringify(to)}`);
}

/** The task's events, oldest first; human, agent and system actors are visibly distinct. */
export function Timeline({ events, now }: { events: BatonEvent[]; now: number }) {
  if (events.length === 0) return <p class="muted">No events yet.</p>;
  return (
    <ol class="timeline" aria-label="Event timeline">
      {events.map((event) => (
        <li key={event.id} class={`event event-by-${event.actor.kind}`} data-event-type={event.type}>
          <div class="event-line">
            <ActorChip actor={event.actor} />
            <span class="event-what">{describe(event)}</span>
            <time class="event-time" dateTime={event.created_at} title={exact(event.created_at)}>
              {ago(event.created_at, now)}
            </time>
          </div>
          {typeof event.data.note === 'string' && <p class="event-note">“{event.data.note}”</p>}
          {changes(event).map((line) => (
            <p key={line} class="event-change">
              {line}
            </p>
          ))}
          <p class="event-meta">
            <code>{event.type}</code>
            {event.machine && <span> · machine {event.machine}</span>}
          </p>
        </li>
      ))}
    </ol>
  );
}
