import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { insertAgent } from '../../store/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { agentName, agentOutput, scopeList, toAgent } from './agent-schema.ts';
import { assertGrantable } from './agent-access.ts';
import { checkAllowlist } from './allowlist.ts';

export const createAgent = defineOperation({
  name: 'agents_create',
  summary: 'Create a principal: an agent (software) or a human, with its scopes, toolAllowlist and rate limit.',
  description: 'Humans only. Then issue it a token per machine with POST /api/v1/agents/{id}/tokens.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/agents', successStatus: 201 },
  input: z.strictObject({
    name: agentName,
    kind: z.enum(PRINCIPAL_KINDS).default('agent'),
    scopes: scopeList,
    tool_allowlist: z.array(z.string().min(1).max(100)).max(100).nullable().default(null),
    rate_limit: z.int().min(1).max(1_000_000).nullable().default(null),
  }),
  output: agentOutput,
  version: (agent) => agent.version,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Only a human may create principals.');
    checkAllowlist(input.tool_allowlist, ctx.operations);
    assertGrantable(ctx.actor, input.scopes);
    const row = await insertAgent(tx, {
      id: ctx.ids.make('agt'),
      name: input.name,
      kind: input.kind,
      scopes: input.scopes,
      tool_allowlist: input.tool_allowlist,
      rate_limit: input.rate_limit,
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
    });
    ctx.emit({ type: 'agent.created', subject: row.id, data: { name: row.name, kind: row.kind, scopes: row.scopes, tool_allowlist: row.tool_allowlist, rate_limit: row.rate_limit } });
    return toAgent(row);
  },
});
