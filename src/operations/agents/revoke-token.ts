import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { lockToken, revokeToken as revokeTokenRow } from '../../store/tokens.ts';
import { defineOperation } from '../define-operation.ts';
import { tokenId, tokenOutput, toToken } from './agent-schema.ts';

export const revokeToken = defineOperation({
  name: 'tokens_revoke',
  summary: 'Revoke one token, at once on every instance; the agent\'s other tokens keep working.',
  kind: 'write',
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'DELETE', path: '/tokens/{id}' },
  input: z.strictObject({ id: tokenId }),
  output: tokenOutput,
  async run(tx, ctx, input) {
    const row = await lockToken(tx, input.id);
    // Another agent's token is answered as absent, so ids cannot be probed.
    if (!row || (ctx.actor.kind !== 'human' && row.agent_id !== ctx.actor.id)) {
      throw new BatonError('not_found', `No token ${input.id}.`, { hint: "[[tokens_list]] lists an agent's tokens." });
    }
    // A rotated token still in its grace is revoked now.
    if (row.revoked_at && row.revoked_at <= ctx.now) return toToken(row);
    const revoked = await revokeTokenRow(tx, row.id, ctx.now);
    ctx.emit({ type: 'token.revoked', subject: row.id, data: { agent_id: row.agent_id, machine: row.machine } });
    return toToken(revoked);
  },
});
