import { z } from 'zod';
import { findAsk } from '../../store/asks.ts';
import { defineOperation } from '../define-operation.ts';
import { LONG_POLL_MAX_S, longPoll } from '../shared/long-poll.ts';
import { askId, askNotFound, askOutput, toAsk } from './ask-schema.ts';

export const getAsk = defineOperation({
  name: 'asks_get',
  summary: 'Read an ask; with `wait_s`, wait up to that long (at most 60 s) for it to close first.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/asks/{id}' },
  input: z.strictObject({ id: askId, wait_s: z.coerce.number().int().min(0).max(LONG_POLL_MAX_S).default(0) }),
  output: askOutput,
  waits: true,
  followable: { seconds: 'wait_s', settles: (output) => output.status !== 'open' },
  async run(_db, ctx, input) {
    const first = await ctx.inWorkspace((db) => findAsk(db, input.id));
    if (!first) throw askNotFound(input.id);
    if (first.status !== 'open') return toAsk(first);
    const closed = await longPoll(ctx, input.wait_s, async (db) => {
      const row = await findAsk(db, input.id);
      return row && row.status !== 'open' ? row : undefined;
    });
    return toAsk(closed ?? (await ctx.inWorkspace((db) => findAsk(db, input.id))) ?? first);
  },
});
