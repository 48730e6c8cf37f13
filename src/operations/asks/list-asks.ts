import { z } from 'zod';
import type { Kysely } from 'kysely';
import { isRole, ROLES, targetRole } from '../../domain/roles.ts';
import { BatonError } from '../../errors.ts';
import { findAgent } from '../../store/agents.ts';
import { type AskListQuery, listAsks as listAskRows } from '../../store/asks.ts';
import type { DB } from '../../store/schema.ts';
import { latestEventId } from '../../store/events.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, namesFilter, pageSchema, paginate } from '../shared/lists.ts';
import { taskId } from '../tasks/task-schema.ts';
import { askOutput, toAsk } from './ask-schema.ts';
import { ASK_STATUSES } from '../../domain/ask-statuses.ts';

/** What `to` filters on: a principal id; `role:<role>`; `me`, the caller and, for a person, their role. */
async function addressedTo(db: Kysely<DB>, actor: { id: string; kind: string }, to: string | undefined): Promise<AskListQuery['to']> {
  if (to === undefined) return undefined;
  const role = targetRole(to);
  if (role !== undefined) {
    if (!isRole(role)) throw new BatonError('validation_failed', `${to} names no role.`, { extra: { errors: [{ pointer: '/to', detail: `must be role:${ROLES.join(', role:')}`, location: 'query' }] } });
    return { role };
  }
  if (to !== 'me') return { id: to };
  const held = actor.kind === 'human' ? (await findAgent(db, actor.id))?.role : undefined;
  return { id: actor.id, role: held ?? undefined };
}

export const listAsks = defineOperation({
  name: 'asks_list',
  summary: 'List asks, newest first: of a task, addressed to you or your role (`to=me`), to a role (`to=role:admin`), or that you asked (`asked_by=me`).',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'tasks',
  http: { method: 'GET', path: '/asks' },
  input: z.strictObject({
    task_id: taskId.optional(),
    to: z.string().min(1).max(64).optional().describe('`me`, a principal id, or `role:<role>`.'),
    asked_by: z.string().min(1).max(64).optional(),
    status: namesFilter(ASK_STATUSES, 'ask statuses'),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(askOutput),
  async run(db, ctx, input) {
    const me = (who: string | undefined) => (who === 'me' ? ctx.actor.id : who);
    const beforeId = ctx.cursors.decode('asks', input.cursor);
    const syncCursor = await latestEventId(db);
    const rows = await listAskRows(db, { taskId: input.task_id, to: await addressedTo(db, ctx.actor, input.to), askedById: me(input.asked_by), statuses: input.status, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('asks', row.id));
    return { data: page.rows.map(toAsk), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
