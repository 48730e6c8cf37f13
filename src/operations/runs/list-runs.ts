import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { latestEventId } from '../../store/events.ts';
import { listRuns as listRunRows } from '../../store/runs.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { taskId } from '../tasks/task-schema.ts';
import { runOutput, toRun } from './run-schema.ts';

const DAY_MS = 86_400_000;

export const listRuns = defineOperation({
  name: 'runs_list',
  summary: 'List runs (leases) newest first, with what each used: per task, per agent, per day (UTC).',
  description: "Agents see only their own runs; humans see everyone's.",
  kind: 'read',
  staleReads: true,
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/runs' },
  input: z.strictObject({
    task_id: taskId.optional(),
    agent: z.string().min(1).max(64).optional().describe('`me`, or a principal id (humans only).'),
    day: z.iso.date().optional().describe('Runs started on this UTC day, YYYY-MM-DD.'),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(runOutput),
  async run(db, ctx, input) {
    const beforeId = ctx.cursors.decode('runs', input.cursor);
    const actor = ctx.actor;
    let holderId = input.agent === 'me' ? actor.id : input.agent;
    if (actor.kind !== 'human') {
      if (holderId !== undefined && holderId !== actor.id) {
        throw new BatonError('not_lease_holder', `Agents see only their own runs; agent=${input.agent} is someone else.`, { hint: 'Use agent=me (or leave agent out).' });
      }
      holderId = actor.id;
    }
    const from = input.day === undefined ? undefined : new Date(`${input.day}T00:00:00Z`);
    const to = from === undefined ? undefined : new Date(from.getTime() + DAY_MS);
    const syncCursor = await latestEventId(db);
    const rows = await listRunRows(db, { taskId: input.task_id, holderId, from, to, beforeId, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('runs', row.lease.id));
    return { data: page.rows.map((row) => toRun(row.lease, row.usage, ctx.now)), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
