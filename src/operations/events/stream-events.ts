import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { DB } from '../../store/schema.ts';
import { type Concerned, concerns, interestKeys, type TaskTie, trackTasks } from '../../domain/event-concerns.ts';
import { type EventRow, latestSeq } from '../../store/events.ts';
import { roleOf, tasksOf } from '../../store/inbox-events.ts';
import type { EventInterest, EventTail } from '../define-operation.ts';
import { defineOperation } from '../define-operation.ts';
import { sinceSeq, viewParam } from '../shared/lists.ts';
import { eventListParams } from './event-params.ts';
import { eventOutput, shapeEvent } from './event-schema.ts';

const streamInput = z.strictObject({
  since: eventListParams.since,
  types: eventListParams.types,
  subject: z.string().min(1).max(64).optional().describe('Only events about this resource id.'),
  view: viewParam,
  for: z.enum(['me']).optional().describe('`me`: only what concerns you (spec/realtime.md, "Events for me"): what your inbox and `wait` get, and the task, lease and comment events of the tasks you hold or are assigned; never your own actions.'),
});

export const streamEvents = defineOperation({
  name: 'events_stream',
  summary: 'Follow the event timeline live (Server-Sent Events), from an event id onward, with no gap and no repeat.',
  description:
    'Each event is one frame: `id: <event id>`, `event: <type>`, `data: <the event as GET /events lists it>`. ' +
    'Resume with `Last-Event-ID` (browsers and EventSource clients send it) or `since`; without either the stream starts now. ' +
    'A `: ping` comment every 15 s keeps proxies from closing an idle stream.',
  kind: 'stream',
  scope: 'events:read',
  approval: 'none',
  http: { method: 'GET', path: '/events/stream' },
  input: streamInput,
  output: eventOutput,
  async open(db, ctx, input) {
    let after: string | undefined = await latestSeq(db);
    if (input.since) {
      after = await sinceSeq(db, input.since);
    }
    const interest = input.for === 'me' ? await concerning(db, ctx.actor.id) : undefined;
    return shapedEvents(ctx.tail.follow(after, ctx.signal, interest), ctx.tail, input);
  },
  frameOf: (event) => ({ id: event.id, event: event.type ?? 'message' }),
});

/**
 * The followed rows the input's `types` and `subject` keep, each shaped once per view for every
 * stream. A named generator, not one made per call: an open stream holds only its state.
 */
async function* shapedEvents(batches: AsyncIterable<readonly EventRow[]>, tail: EventTail, input: z.output<typeof streamInput>): AsyncGenerator<z.output<typeof eventOutput>> {
  const types = input.types ? new Set(input.types) : undefined;
  const key = `events_stream ${input.view ?? 'compact'}`;
  for await (const batch of batches) {
    for (const row of batch) {
      if (types && !types.has(row.type)) continue;
      if (input.subject && row.subject !== input.subject) continue;
      yield tail.shared(row, key, () => shapeEvent(row, input));
    }
  }
}

/**
 * What a `for=me` stream takes: the events that concern the caller, its role and tasks as they stand
 * when the stream opens, its tasks then kept by the events themselves (`trackTasks`), in commit order.
 */
async function concerning(db: Kysely<DB>, id: string): Promise<EventInterest> {
  const [role, held] = await Promise.all([roleOf(db, id), tasksOf(db, id)]);
  const tasks = new Map<string, TaskTie>(held.map((t) => [t.id, { holds: t.holds, assigned: t.assigned }]));
  const who: Concerned = { id, role, tasks };
  const keys = interestKeys(who);
  return {
    keys,
    admit(row: EventRow) {
      const taken = concerns(row, who);
      const had = tasks.has(row.subject);
      trackTasks(tasks, row, id);
      // An event changes at most its own subject's place among the tasks.
      if (tasks.has(row.subject) !== had) {
        if (had) keys.delete(row.subject);
        else keys.add(row.subject);
      }
      return taken;
    },
  };
}
