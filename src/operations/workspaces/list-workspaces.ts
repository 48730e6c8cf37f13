import { z } from 'zod';
import { listVisibleWorkspaces } from '../../store/workspaces.ts';
import { defineOperation } from '../define-operation.ts';
import { toWorkspace, workspaceOutput } from './workspace-schema.ts';

export const listWorkspaces = defineOperation({
  name: 'workspaces_list',
  summary: 'List your workspaces: the one this token or session acts in (`current`), and for a person who signs in with single sign-on every other they belong to.',
  description:
    'Everything else you read or write is the current workspace\'s. A token belongs to one workspace; a person switches their web session with POST /auth/workspace.',
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/workspaces' },
  input: z.strictObject({}),
  output: z.object({ data: z.array(workspaceOutput) }),
  async run(db, ctx) {
    const rows = await listVisibleWorkspaces(db);
    return { data: rows.map((row) => toWorkspace(row, ctx.actor.workspaceId)) };
  },
});
