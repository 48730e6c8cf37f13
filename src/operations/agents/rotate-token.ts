import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { insertToken, lockToken, revokeToken as revokeTokenRow } from '../../store/tokens.ts';
import { generateToken, hashToken, tokenPrefix } from '../../tokens.ts';
import { defineOperation } from '../define-operation.ts';
import { assertGrantable } from './agent-access.ts';
import { tokenId, tokenOutput, toToken } from './agent-schema.ts';

/** The longest overlap of the old and the new token: a deploy, not a second credential. */
const GRACE_MAX_S = 7 * 86_400;

export const rotateToken = defineOperation({
  name: 'tokens_rotate',
  summary: 'Replace a token: a new one for the same principal, machine and scopes; the old one stops after grace_s.',
  kind: 'write',
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'POST', path: '/tokens/{id}/rotate', successStatus: 201 },
  input: z.strictObject({
    id: tokenId,
    grace_s: z.int().min(0).max(GRACE_MAX_S).default(0).describe('Seconds the old token keeps working; 0: it stops now.'),
  }),
  output: tokenOutput.extend({
    token: z.string().nullable().describe('The new bearer token, shown once; null on a replay.'),
    replaced: tokenOutput,
  }),
  redactForReplay: (output) => ({ ...output, token: null }),
  async run(tx, ctx, input) {
    const old = await lockToken(tx, input.id);
    // Another agent's token is answered as absent, as tokens_revoke does.
    if (!old || (ctx.actor.kind !== 'human' && old.agent_id !== ctx.actor.id)) {
      throw new BatonError('not_found', `No token ${input.id}.`, { hint: "[[tokens_list]] lists an agent's tokens." });
    }
    if (old.revoked_at) {
      throw new BatonError('conflict_state', `Token ${old.id} was revoked${old.revoked_at > ctx.now ? ' (rotated: it stops at ' + old.revoked_at.toISOString() + ')' : ''}; only a live token is rotated.`, {
        hint: 'Issue a new one with [[tokens_create]].',
      });
    }
    assertGrantable(ctx.actor, old.scopes);
    // The old one is revoked first (as of the end of its grace), which frees its machine label for
    // the new one; both happen in this transaction, so no moment has neither working.
    const replaced = await revokeTokenRow(tx, old.id, new Date(ctx.now.getTime() + input.grace_s * 1000));
    const token = generateToken();
    // The same lifetime as the old one had, from now.
    const lifetimeMs = old.expires_at ? old.expires_at.getTime() - old.created_at.getTime() : undefined;
    const row = await insertToken(tx, {
      id: ctx.ids.make('tok'),
      agent_id: old.agent_id,
      machine: old.machine,
      token_hash: hashToken(token),
      token_prefix: tokenPrefix(token),
      scopes: old.scopes,
      expires_at: lifetimeMs === undefined ? null : new Date(ctx.now.getTime() + lifetimeMs),
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
    });
    if (!row) throw new Error(`token ${old.id}'s machine label stayed taken after its revocation`);
    const expiresAt = row.expires_at?.toISOString() ?? null;
    ctx.emit({ type: 'token.created', subject: row.id, data: { agent_id: row.agent_id, machine: row.machine, scopes: row.scopes, expires_at: expiresAt, replaces: old.id } });
    ctx.emit({ type: 'token.revoked', subject: old.id, data: { agent_id: old.agent_id, machine: old.machine, replaced_by: row.id, effective_at: replaced.revoked_at?.toISOString() ?? null } });
    return { ...toToken(row), token, replaced: toToken(replaced) };
  },
});
