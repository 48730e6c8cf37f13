import { z } from 'zod';
import { findAgent } from '../../store/agents.ts';
import { latestEventId } from '../../store/events.ts';
import { listTokens as listTokenRows } from '../../store/tokens.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { agentNotFound, assertAgentAccess } from './agent-access.ts';
import { agentId, tokenOutput, toToken } from './agent-schema.ts';

export const listTokens = defineOperation({
  name: 'tokens_list',
  summary: "List an agent's tokens: metadata only (prefix, machine, scopes, last used, revoked), never the token.",
  kind: 'read',
  scope: 'agents:admin',
  approval: 'none',
  http: { method: 'GET', path: '/agents/{id}/tokens' },
  input: z.strictObject({ id: agentId, cursor: cursorParam, limit: limitParam }),
  output: pageSchema(tokenOutput),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('tokens', input.cursor);
    assertAgentAccess(ctx.actor, input.id);
    if (!(await findAgent(db, input.id))) throw agentNotFound(input.id);
    const syncCursor = await latestEventId(db);
    const rows = await listTokenRows(db, input.id, beforeId, input.limit);
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('tokens', row.id));
    return { data: page.rows.map(toToken), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
