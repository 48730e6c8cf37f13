import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { type AgentChanges, lockAgent, updateAgent as updateAgentRow } from '../../store/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { agentNotFound, assertGrantable } from './agent-access.ts';
import { agentId, agentName, agentOutput, scopeList, toAgent } from './agent-schema.ts';
import { checkAllowlist } from './allowlist.ts';

export const updateAgent = defineOperation({
  name: 'agents_update',
  summary: 'Change a principal: name, scopes, toolAllowlist, rate limit, or disable it (its tokens stop working at once).',
  description: 'Humans only. Narrowing scopes narrows every token of the principal immediately (a token has the intersection).',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  http: { method: 'PATCH', path: '/agents/{id}' },
  input: z
    .strictObject({
      id: agentId,
      name: agentName.optional(),
      scopes: scopeList.optional(),
      tool_allowlist: z.array(z.string().min(1).max(100)).max(100).nullable().optional(),
      rate_limit: z.int().min(1).max(1_000_000).nullable().optional(),
      disabled: z.boolean().optional(),
    })
    .refine((i) => Object.keys(i).length > 1, 'send at least one of name, scopes, tool_allowlist, rate_limit, disabled'),
  output: agentOutput,
  version: (agent) => agent.version,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Only a human may change principals.');
    const row = await lockAgent(tx, input.id);
    if (!row) throw agentNotFound(input.id);
    assertVersion(`Agent ${row.id}`, row.version, ctx.expectedVersion);
    checkAllowlist(input.tool_allowlist, ctx.operations);
    if (input.scopes) assertGrantable(ctx.actor, input.scopes.filter((s) => !row.scopes.includes(s)));
    const { id: _id, ...fields } = input;
    const changes: AgentChanges = {};
    const before: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(fields) as [keyof AgentChanges, unknown][]) {
      if (value === undefined || JSON.stringify(value) === JSON.stringify(row[key])) continue;
      (changes as Record<string, unknown>)[key] = value;
      before[key] = row[key];
    }
    if (Object.keys(changes).length === 0) return toAgent(row);
    const updated = await updateAgentRow(tx, row.id, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    const diff = Object.fromEntries(Object.keys(changes).map((k) => [k, { from: before[k], to: (changes as Record<string, unknown>)[k] }]));
    ctx.emit({ type: 'agent.updated', subject: row.id, data: { changes: diff } });
    return toAgent(updated);
  },
});
