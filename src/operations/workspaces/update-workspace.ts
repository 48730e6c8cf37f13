import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { updateWorkspaceSettings } from '../../store/workspaces.ts';
import { defineOperation } from '../define-operation.ts';
import { settingsShape, toWorkspaceSettings, workspaceSettingsOutput } from './workspace-schema.ts';

const changes = z.strictObject({
  escalate_ask_s: settingsShape.escalate_ask_s.optional(),
  escalate_approval_s: settingsShape.escalate_approval_s.optional(),
  escalate_review_s: settingsShape.escalate_review_s.optional(),
  escalate_to: settingsShape.escalate_to.optional(),
  rate_limit: settingsShape.rate_limit.optional(),
});

export const updateWorkspace = defineOperation({
  name: 'workspaces_update',
  summary: "Change your current workspace's settings (admins); null resets one to the server default.",
  kind: 'write',
  scope: 'agents:admin',
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/workspaces/current' },
  input: changes,
  output: workspaceSettingsOutput,
  async run(tx, ctx, input) {
    const set = Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)) as z.output<typeof changes>;
    const id = ctx.actor.workspaceId;
    const row = await updateWorkspaceSettings(tx, id, set);
    if (!row) throw new BatonError('not_found', `Workspace ${id} is gone.`);
    ctx.emit({ type: 'workspace.updated', subject: id, data: { changed: Object.keys(set) } });
    return toWorkspaceSettings(row, id, ctx.config);
  },
});
