import { z } from 'zod';
import { findAgent } from '../../store/agents.ts';
import { defineOperation } from '../define-operation.ts';
import { agentNotFound, assertAgentAccess } from './agent-access.ts';
import { agentId, agentOutput, toAgent } from './agent-schema.ts';

export const getAgent = defineOperation({
  name: 'agents_get',
  summary: 'Read one principal: kind, scopes, toolAllowlist, rate limit, disabled.',
  kind: 'read',
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'GET', path: '/agents/{id}' },
  input: z.strictObject({ id: agentId }),
  output: agentOutput,
  version: (agent) => agent.version,
  async run(db, ctx, input) {
    assertAgentAccess(ctx.actor, input.id);
    const row = await findAgent(db, input.id);
    if (!row) throw agentNotFound(input.id);
    return toAgent(row);
  },
});
