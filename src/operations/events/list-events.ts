import { z } from 'zod';
import { defineOperation } from '../define-operation.ts';
import { pageSchema } from '../shared/lists.ts';
import { eventListParams } from './event-params.ts';
import { eventPage } from './event-page.ts';
import { eventOutput } from './event-schema.ts';

export const listEvents = defineOperation({
  name: 'events_list',
  summary: 'Read the event timeline in commit order, from an event id onward (`since`), in bounded pages.',
  description: 'Resume after a crash by passing the last event id you handled as `since`.',
  kind: 'read',
  scope: 'events:read',
  approval: 'none',
  http: { method: 'GET', path: '/events' },
  input: z.strictObject({
    ...eventListParams,
    subject: z.string().min(1).max(64).optional().describe('Only events about this resource id.'),
  }),
  output: pageSchema(eventOutput),
  run: (db, ctx, input) => eventPage(db, ctx.cursors, input),
});
