import { z } from 'zod';
import { idPattern } from '../../ids.ts';
import type { Config } from '../../config.ts';
import { ROLE_PREFIX } from '../../domain/roles.ts';
import { effectiveEscalation } from '../../domain/workspace-settings.ts';
import type { WorkspaceRow } from '../../store/workspaces.ts';

export const workspaceId = z.string().regex(new RegExp(idPattern('wsp'))).describe('A workspace id (`wsp_…`).');

export const workspaceName = z
  .string()
  .trim()
  .min(1)
  .max(100)
  .regex(/^[^\p{Cc}]+$/u, 'no control characters')
  .describe('Unique on the server.');

export const workspaceOutput = z.object({
  id: z.string(),
  name: z.string(),
  current: z.boolean().describe('The workspace this token or session acts in.'),
  created_at: z.string(),
});

export function toWorkspace(row: WorkspaceRow, currentId: string): z.output<typeof workspaceOutput> {
  return { id: row.id, name: row.name, current: row.id === currentId, created_at: row.created_at.toISOString() };
}

const seconds = z.int().min(0).max(31_536_000);

/** A workspace's settings (the members of workspaces_update); in an answer, null: the server's default. */
export const settingsShape = {
  escalate_ask_s: seconds.nullable(),
  escalate_approval_s: seconds.nullable(),
  escalate_review_s: seconds.nullable(),
  escalate_to: z
    .array(z.string().regex(new RegExp(`^(${ROLE_PREFIX}(owner|admin|member|viewer)|(?!${ROLE_PREFIX})[^\\s,]{1,100})$`)))
    .min(1)
    .max(20)
    .nullable(),
  rate_limit: z.int().min(1).max(1_000_000).nullable(),
};

const settings = z.object(settingsShape);

export const workspaceSettingsOutput = workspaceOutput.extend({
  settings: settings.describe('Null: the server default.'),
  effective: settings.describe('In force. rate_limit: per rate window, all tokens together; null: none.'),
});

/** A workspace with its settings, and what is in force: its own where set, the server's elsewhere. */
export function toWorkspaceSettings(row: WorkspaceRow, currentId: string, config: Pick<Config, 'escalation'>): z.output<typeof workspaceSettingsOutput> {
  const own = { escalate_ask_s: row.escalate_ask_s, escalate_approval_s: row.escalate_approval_s, escalate_review_s: row.escalate_review_s, escalate_to: row.escalate_to, rate_limit: row.rate_limit };
  const sla = effectiveEscalation(own, config.escalation);
  return {
    ...toWorkspace(row, currentId),
    settings: own,
    effective: { escalate_ask_s: sla.askS, escalate_approval_s: sla.approvalS, escalate_review_s: sla.reviewS, escalate_to: [...sla.to], rate_limit: row.rate_limit },
  };
}
