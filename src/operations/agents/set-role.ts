import { z } from 'zod';
import { ROLE_SCOPES, ROLES } from '../../domain/roles.ts';
import { BatonError } from '../../errors.ts';
import { lockAgent, updateAgent } from '../../store/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { agentNotFound, isOwner } from './agent-access.ts';
import { agentId, agentOutput, toAgent } from './agent-schema.ts';

export const setRole = defineOperation({
  name: 'agents_set_role',
  summary: "Give a person a role (owner, admin, member, viewer); their scopes become the role's at their next request.",
  description: 'Humans only. Only an owner makes an owner or changes an owner.',
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  http: { method: 'POST', path: '/agents/{id}/role' },
  input: z.strictObject({ id: agentId, role: z.enum(ROLES) }),
  output: agentOutput,
  version: (agent) => agent.version,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Only a human may change roles.');
    const row = await lockAgent(tx, input.id);
    if (!row) throw agentNotFound(input.id);
    if (row.kind !== 'human') throw new BatonError('conflict_state', `${row.id} is an agent; agents have scoped tokens, not roles.`, { hint: '[[agents_update]] changes an agent\'s scopes.' });
    assertVersion(`Agent ${row.id}`, row.version, ctx.expectedVersion);
    if ((input.role === 'owner' || row.role === 'owner') && !(await isOwner(tx, ctx.actor))) {
      throw new BatonError('owner_required', `Only an owner may ${input.role === 'owner' ? 'make an owner' : `change the role of ${row.name}, an owner`}.`);
    }
    const scopes = [...ROLE_SCOPES[input.role]];
    if (row.role === input.role && JSON.stringify([...row.scopes].sort()) === JSON.stringify([...scopes].sort())) return toAgent(row);
    const updated = await updateAgent(tx, row.id, { role: input.role, scopes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'agent.role_changed', subject: row.id, data: { from: row.role, to: input.role, scopes } });
    return toAgent(updated);
  },
});
