import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { latestEventId } from '../../store/events.ts';
import { listLeases as listLeaseRows } from '../../store/leases.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { taskId } from '../tasks/task-schema.ts';
import { leaseOutput, toLease } from './lease-schema.ts';

export const listLeases = defineOperation({
  name: 'leases_list',
  summary: 'List leases, newest first: `holder=me&state=active` is what you hold now (step 2 of resuming after a crash).',
  description: 'Agents see only their own leases; humans see everyone\'s.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'work',
  http: { method: 'GET', path: '/leases' },
  input: z.strictObject({
    holder: z.string().min(1).max(64).optional().describe('`me`, or a principal id (humans only).'),
    state: z.enum(['active', 'ended']).optional().describe('`active`: live now; `ended`: released, expired or ended.'),
    task_id: taskId.optional(),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(leaseOutput),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('leases', input.cursor);
    const actor = ctx.actor;
    let holderId = input.holder === 'me' ? actor.id : input.holder;
    if (actor.kind !== 'human') {
      if (holderId !== undefined && holderId !== actor.id) {
        throw new BatonError('not_lease_holder', `Agents see only their own leases; holder=${input.holder} is someone else.`, {
          hint: 'Use holder=me (or leave holder out).',
        });
      }
      holderId = actor.id;
    }
    const syncCursor = await latestEventId(db);
    const rows = await listLeaseRows(db, { holderId, taskId: input.task_id, state: input.state, now: ctx.now, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('leases', row.id));
    return { data: page.rows.map((row) => toLease(row, ctx.now)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
