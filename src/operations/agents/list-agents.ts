import { z } from 'zod';
import { PRINCIPAL_KINDS } from '../../domain/scopes.ts';
import { findAgent, listAgents as listAgentRows } from '../../store/agents.ts';
import { latestEventId } from '../../store/events.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { agentOutput, toAgent } from './agent-schema.ts';

export const listAgents = defineOperation({
  name: 'agents_list',
  summary: 'List principals (agents and humans), newest first.',
  description: 'An agent principal sees only itself.',
  kind: 'read',
  staleReads: true,
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'GET', path: '/agents' },
  input: z.strictObject({ kind: z.enum(PRINCIPAL_KINDS).optional(), cursor: cursorParam, limit: limitParam }),
  output: pageSchema(agentOutput),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('agents', input.cursor);
    const syncCursor = await latestEventId(db);
    if (ctx.actor.kind !== 'human') {
      const self = await findAgent(db, ctx.actor.id);
      return { data: self ? [toAgent(self)] : [], has_more: false, next_cursor: null, sync_cursor: syncCursor };
    }
    const rows = await listAgentRows(db, { kind: input.kind, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('agents', row.id));
    return { data: page.rows.map(toAgent), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
