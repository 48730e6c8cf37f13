import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { latestEventId } from '../../store/events.ts';
import { listSessions as listSessionRows } from '../../store/sessions.ts';
import { agentId } from '../agents/agent-schema.ts';
import { agentNotFound } from '../agents/agent-access.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { mayManageSessionsOf, sessionOutput, toSession } from './session-schema.ts';

export const listSessions = defineOperation({
  name: 'sessions_list',
  summary: "List a person's live web sessions (device, last seen); yours by default, anyone's for an admin.",
  kind: 'read',
  scope: null,
  humanOnly: true,
  approval: 'none',
  http: { method: 'GET', path: '/sessions' },
  input: z.strictObject({ agent_id: agentId.optional(), cursor: cursorParam, limit: limitParam }),
  output: pageSchema(sessionOutput),
  async run(db, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Sessions are for humans signed in with single sign-on; agents use tokens.');
    const beforeId = ctx.cursors.decode('sessions', input.cursor);
    const whose = input.agent_id ?? ctx.actor.id;
    if (!mayManageSessionsOf(ctx.actor, whose)) throw agentNotFound(whose);
    const syncCursor = await latestEventId(db);
    const rows = await listSessionRows(db, { agentId: whose, beforeId, limit: input.limit, now: ctx.now });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('sessions', row.id));
    return { data: page.rows.map((row) => toSession(row, ctx.actor)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
