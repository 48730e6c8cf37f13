import { z } from 'zod';
import { latestSeq } from '../../store/events.ts';
import { defineOperation } from '../define-operation.ts';
import { sinceSeq, viewParam } from '../shared/lists.ts';
import { eventListParams } from './event-params.ts';
import { eventOutput, shapeEvent } from './event-schema.ts';

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
  input: z.strictObject({
    since: eventListParams.since,
    types: eventListParams.types,
    subject: z.string().min(1).max(64).optional().describe('Only events about this resource id.'),
    view: viewParam,
  }),
  output: eventOutput,
  async open(db, ctx, input) {
    let after: string | undefined = await latestSeq(db);
    if (input.since) {
      after = await sinceSeq(db, input.since);
    }
    const types = input.types ? new Set(input.types) : undefined;
    const start = after;
    return (async function* () {
      for await (const batch of ctx.tail.follow(start, ctx.signal)) {
        for (const row of batch) {
          if (types && !types.has(row.type)) continue;
          if (input.subject && row.subject !== input.subject) continue;
          yield ctx.tail.shared(row, `events_stream ${input.view ?? 'compact'}`, () => shapeEvent(row, input));
        }
      }
    })();
  },
  frameOf: (event) => ({ id: event.id, event: event.type ?? 'message' }),
});
