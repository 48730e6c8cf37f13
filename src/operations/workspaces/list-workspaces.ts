import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listVisibleWorkspaces } from '../../store/workspaces.ts';
import { pageSchema } from '../shared/lists.ts';
import { defineOperation } from '../define-operation.ts';
import { toWorkspace, workspaceOutput } from './workspace-schema.ts';

export const listWorkspaces = defineOperation({
  name: 'workspaces_list',
  summary: "List your workspaces: the one you act in (`current`) and a single sign-on person's others.",
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/workspaces' },
  input: z.strictObject({}),
  output: pageSchema(workspaceOutput),
  async run(db, ctx) {
    const syncCursor = await latestEventId(db);
    const rows = await listVisibleWorkspaces(db);
    // A person belongs to a handful of workspaces: one page holds them all.
    return { data: rows.map((row) => toWorkspace(row, ctx.actor.workspaceId)), has_more: false, next_cursor: null, sync_cursor: syncCursor };
  },
});
