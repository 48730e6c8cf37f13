import { z } from 'zod';
import { EVENT_TYPES } from '../../domain/event-types.ts';
import type { ActorKind } from '../../domain/scopes.ts';
import type { EventRow } from '../../store/events.ts';
import { project } from '../shared/lists.ts';
import { eventData } from './event-data.ts';
import { actorRef } from '../tasks/task-schema.ts';

const fullEvent = z.object({
  id: z.string().describe('`evt_<ULID>`; also the cursor for `since`.'),
  type: z.string().describe(`Event type, e.g. ${EVENT_TYPES.slice(0, 3).join(', ')}.`),
  subject: z.string().describe('The id of the resource the event is about.'),
  actor: actorRef.describe('Who caused it, and whether a human, an agent or the system.'),
  data: z.record(z.string(), z.unknown()),
  created_at: z.iso.datetime(),
  token_id: z.string().nullable().describe('The token that made the request (full view).'),
  machine: z.string().nullable().describe('The machine label of that token (full view).'),
  idempotency_key: z.string().nullable().describe('The Idempotency-Key of the request (full view).'),
  approval_id: z.string().nullable().describe('The approval the write ran under, if any (full view).'),
});
type Event = z.infer<typeof fullEvent>;

export const EVENT_FIELDS = Object.keys(fullEvent.shape) as [keyof Event, ...(keyof Event)[]];
const COMPACT: readonly (keyof Event)[] = ['id', 'type', 'subject', 'actor', 'data', 'created_at'];

/** The fields every event carries, whatever the view or `fields` (so the OpenAPI document marks them required). */
const CORE = { id: true, type: true, subject: true, created_at: true } as const;
const EVENT_CORE = Object.keys(CORE) as (keyof typeof CORE)[];
export const eventOutput = fullEvent.partial().required(CORE).strict();

export function shapeEvent(row: EventRow, projection: { view: 'compact' | 'full'; fields?: readonly string[] | undefined }): Partial<Event> & Pick<Event, (typeof EVENT_CORE)[number]> {
  const event: Event = {
    id: row.id,
    type: row.type,
    subject: row.subject,
    actor: { id: row.actor_id, kind: row.actor_kind as ActorKind },
    data: eventData(row),
    created_at: row.created_at.toISOString(),
    token_id: row.token_id,
    machine: row.machine,
    idempotency_key: row.idempotency_key,
    approval_id: row.approval_id,
  };
  if (projection.fields) return project(event, projection.fields, EVENT_CORE);
  return projection.view === 'full' ? event : project(event, COMPACT, EVENT_CORE);
}
