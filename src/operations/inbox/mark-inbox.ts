import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import { inboxCounts as countInbox, markInbox as markInboxRows } from '../../store/inbox.ts';
import { defineOperation } from '../define-operation.ts';
import { INBOX_STATES } from '../../domain/inbox-kinds.ts';
import { inboxCounts, inboxItemOutput, toInboxItem } from './inbox-schema.ts';

export const markInbox = defineOperation({
  name: 'inbox_mark',
  summary: 'Mark your inbox items read, unread or done (acknowledge a mention with done).',
  kind: 'write',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'tasks',
  http: { method: 'POST', path: '/inbox/mark' },
  input: z.strictObject({
    ids: z.array(z.string().regex(new RegExp(idPattern('inb')), 'must be an inbox item id (inb_…)')).min(1).max(100),
    state: z.enum(INBOX_STATES),
  }),
  output: z.object({ items: z.array(inboxItemOutput).max(100).describe('The items changed; ids not yours are skipped.'), counts: inboxCounts }),
  async run(tx, ctx, input) {
    const rows = await markInboxRows(tx, ctx.actor.id, input.ids, input.state, ctx.now);
    return { items: rows.map(toInboxItem), counts: await countInbox(tx, ctx.actor.id) };
  },
});
