import { z } from 'zod';
import { idPattern } from '../../ids.ts';
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
    actor: z
      .string()
      .regex(new RegExp(`^(me|system|${idPattern('agt').replace(/^\^|\$$/g, '')})$`), 'actor is me, system, or a principal id (agt_…)')
      .optional()
      .describe('Only events this principal caused: `agt_…`, `me`, or `system` (lease expiries and other server work).'),
    actor_kind: z.enum(['human', 'agent', 'system']).optional().describe('Only events caused by a human, an agent or the system.'),
  }),
  output: pageSchema(eventOutput),
  run: (db, ctx, input) =>
    eventPage(db, ctx.cursors, { subject: input.subject, actorId: input.actor === 'me' ? ctx.actor.id : input.actor, actorKind: input.actor_kind }, input),
});
