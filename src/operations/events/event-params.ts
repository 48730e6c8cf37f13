import { z } from 'zod';
import { cursorParam, limitParam, listFilter, namesFilter, sinceParam, viewParam } from '../shared/lists.ts';
import { EVENT_FIELDS } from './event-schema.ts';

/** Query parameters both event lists share. */
export const eventListParams = {
  since: sinceParam,
  cursor: cursorParam,
  limit: limitParam,
  order: z.enum(['asc', 'desc']).default('asc').describe('`asc` (default) reads forward from `since`; `desc` gives the newest first.'),
  types: listFilter(z.array(z.string().regex(/^[a-z_]+\.[a-z_]+$/, 'event types look like task.created')).max(20))
    .optional()
    .describe('Event types to keep.'),
  view: viewParam,
  fields: namesFilter(EVENT_FIELDS, 'event fields'),
};
