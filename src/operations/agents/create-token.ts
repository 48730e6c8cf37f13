import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findAgent } from '../../store/agents.ts';
import { insertToken } from '../../store/tokens.ts';
import { generateToken, hashToken, tokenPrefix } from '../../tokens.ts';
import { defineOperation } from '../define-operation.ts';
import { agentNotFound, assertAgentAccess, assertGrantable } from './agent-access.ts';
import { agentId, machineLabel, scopeList, tokenOutput, toToken } from './agent-schema.ts';

export const createToken = defineOperation({
  name: 'tokens_create',
  summary: 'Issue a bearer token for one agent on one machine; the token is in this response only, never again.',
  description: 'Scopes must be a subset of the agent\'s (default: all of them). One live token per agent and machine label.',
  kind: 'write',
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'POST', path: '/agents/{id}/tokens', successStatus: 201 },
  input: z.strictObject({
    id: agentId,
    machine: machineLabel,
    scopes: scopeList.optional(),
    expires_in_s: z.int().min(60).max(5 * 365 * 86_400).optional().describe('Lifetime in seconds; omitted means no expiry.'),
  }),
  output: tokenOutput.extend({
    token: z.string().nullable().describe('The bearer token, shown once: store it now. It is never stored, so a replay of this request answers null here.'),
  }),
  redactForReplay: (output) => ({ ...output, token: null }),
  async run(tx, ctx, input) {
    assertAgentAccess(ctx.actor, input.id);
    const agent = await findAgent(tx, input.id);
    if (!agent) throw agentNotFound(input.id);
    const scopes = input.scopes ?? agent.scopes;
    assertGrantable(ctx.actor, scopes);
    const extra = scopes.filter((s) => !agent.scopes.includes(s));
    if (extra.length > 0) {
      throw new BatonError('validation_failed', `Agent ${agent.id} does not have ${extra.join(', ')}; a token's scopes must be a subset of its agent's.`, {
        extra: { errors: [{ pointer: '/scopes', detail: `not held by the agent: ${extra.join(', ')}`, location: 'body' }] },
      });
    }
    const token = generateToken();
    const row = await insertToken(tx, {
      id: ctx.ids.make('tok'),
      agent_id: agent.id,
      machine: input.machine,
      token_hash: hashToken(token),
      token_prefix: tokenPrefix(token),
      scopes,
      expires_at: input.expires_in_s ? new Date(ctx.now.getTime() + input.expires_in_s * 1000) : null,
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
    });
    if (!row) {
      throw new BatonError('conflict_state', `Agent ${agent.id} already has a live token for machine "${input.machine}".`, {
        hint: 'One token per agent and machine: revoke the old one ([[tokens_revoke]]) or use another machine label.',
      });
    }
    ctx.emit({ type: 'token.created', subject: row.id, data: { agent_id: agent.id, machine: row.machine, scopes, expires_at: row.expires_at?.toISOString() ?? null } });
    return { ...toToken(row), token };
  },
});
