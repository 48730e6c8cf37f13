import type { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findWorkspace, updateWorkspaceSettings } from '../../store/workspaces.ts';
import { defineOperation } from '../define-operation.ts';
import { toWorkspaceSettings, workspaceSettings, workspaceSettingsOutput } from './workspace-schema.ts';

export const updateWorkspace = defineOperation({
  name: 'workspaces_update',
  summary: "Change your workspace's settings (admins); null resets one.",
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/workspaces/current' },
  input: workspaceSettings,
  output: workspaceSettingsOutput,
  async run(tx, ctx, input) {
    const set = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as z.output<typeof workspaceSettings>;
    const id = ctx.actor.workspaceId;
    // Nothing sent, nothing changed: the settings as they are, and no event.
    const changed = Object.keys(set).length > 0;
    const row = changed ? await updateWorkspaceSettings(tx, id, set) : await findWorkspace(tx, id);
    if (!row) throw new BatonError('not_found', `Workspace ${id} is gone.`);
    if (changed) ctx.emit({ type: 'workspace.updated', subject: id, data: { changed: Object.keys(set) } });
    return toWorkspaceSettings(row, ctx.config, ctx.actor);
  },
});
