import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { ROLE_SCOPES, ROLES } from '../../domain/roles.ts';
import { insertAgent } from '../../store/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { agentName, agentOutput, scopeList, toAgent } from './agent-schema.ts';
import { assertGrantable, isOwner } from './agent-access.ts';
import { checkAllowlist } from './allowlist.ts';

export const createAgent = defineOperation({
  name: 'agents_create',
  summary: 'Create a principal: an agent (software) or a human, with its scopes, toolAllowlist and rate limit.',
  description: 'Humans only. Then issue it a token per machine with POST /api/v1/agents/{id}/tokens. A human\'s `email` invites a person.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/agents', successStatus: 201 },
  input: z.strictObject({
    name: agentName,
    kind: z.enum(PRINCIPAL_KINDS).default('agent'),
    scopes: scopeList.optional().describe('Required unless `role` is given.'),
    tool_allowlist: z.array(z.string().min(1).max(100)).max(100).nullable().default(null),
    rate_limit: z.int().min(1).max(1_000_000).nullable().default(null),
    email: z.email().max(254).optional(),
    role: z.enum(ROLES).optional().describe('Its scopes replace `scopes`.'),
  }),
  output: agentOutput,
  version: (agent) => agent.version,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Only a human may create principals.');
    checkAllowlist(input.tool_allowlist, ctx.operations);
    if ((input.email !== undefined || input.role !== undefined) && input.kind !== 'human') {
      throw new BatonError('validation_failed', 'Only a human has an email or a role; agents have scoped tokens.', {
        extra: { errors: [{ pointer: input.role !== undefined ? '/role' : '/email', detail: 'for kind "human" only', location: 'body' }] },
      });
    }
    if (input.role === 'owner' && !(await isOwner(tx, ctx.actor))) throw new BatonError('owner_required', 'Only an owner may make an owner.');
    const scopes = input.role ? [...ROLE_SCOPES[input.role]] : input.scopes;
    if (!scopes) {
      throw new BatonError('validation_failed', 'Say what it may do: `scopes`, or for a human a `role`.', {
        extra: { errors: [{ pointer: '/scopes', detail: 'required unless role is given', location: 'body' }] },
      });
    }
    assertGrantable(ctx.actor, scopes);
    const row = await insertAgent(tx, {
      id: ctx.ids.make('agt'),
      name: input.name,
      kind: input.kind,
      scopes,
      email: input.email ?? null,
      role: input.role ?? null,
      tool_allowlist: input.tool_allowlist,
      rate_limit: input.rate_limit,
      created_at: ctx.now,
      created_by_id: ctx.actor.id,
      created_by_kind: ctx.actor.kind,
    });
    ctx.emit({ type: 'agent.created', subject: row.id, data: { name: row.name, kind: row.kind, scopes: row.scopes, tool_allowlist: row.tool_allowlist, rate_limit: row.rate_limit, ...(row.role ? { role: row.role } : {}), ...(row.email ? { email: row.email } : {}) } });
    return toAgent(row);
  },
});
