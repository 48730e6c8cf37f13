import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { endSession, lockSession } from '../../store/sessions.ts';
import { defineOperation } from '../define-operation.ts';
import { mayManageSessionsOf, sessionId, sessionNotFound, sessionOutput, toSession } from './session-schema.ts';

export const revokeSession = defineOperation({
  name: 'sessions_revoke',
  summary: 'End a web session on the server at once (its cookie stops working); yours, or anyone\'s for an admin.',
  kind: 'write',
  scope: null,
  humanOnly: true,
  approval: 'none',
  http: { method: 'DELETE', path: '/sessions/{id}' },
  input: z.strictObject({ id: sessionId }),
  output: sessionOutput,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Sessions are for humans signed in with single sign-on; agents use tokens.');
    const row = await lockSession(tx, input.id);
    if (!row || !mayManageSessionsOf(ctx.actor, row.agent_id)) throw sessionNotFound(input.id);
    if (row.ended_at) return toSession(row, ctx.actor);
    const ended = (await endSession(tx, row.id, 'revoked', ctx.now)) ?? row;
    ctx.emit({ type: 'session.revoked', subject: row.id, data: { agent_id: row.agent_id } });
    return toSession(ended, ctx.actor);
  },
});
