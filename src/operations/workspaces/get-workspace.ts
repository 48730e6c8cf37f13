import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findWorkspace } from '../../store/workspaces.ts';
import { defineOperation } from '../define-operation.ts';
import { toWorkspaceSettings, workspaceSettingsOutput } from './workspace-schema.ts';

export const getWorkspace = defineOperation({
  name: 'workspaces_get',
  summary: "Your workspace's settings (null: server default) and those in force.",
  kind: 'read',
  scope: 'tasks:read',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/workspaces/current' },
  input: z.strictObject({}),
  output: workspaceSettingsOutput,
  async run(db, ctx) {
    const row = await findWorkspace(db, ctx.actor.workspaceId);
    if (!row) throw new BatonError('not_found', `Workspace ${ctx.actor.workspaceId} is gone.`);
    return toWorkspaceSettings(row, ctx.config, ctx.actor);
  },
});
