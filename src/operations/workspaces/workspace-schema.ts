import { z } from 'zod';
import type { Principal } from '../../domain/principal.ts';
import { idPattern } from '../../ids.ts';
import type { Config } from '../../config.ts';
import { isRole, targetRole } from '../../domain/roles.ts';
import { effectiveEscalation } from '../../domain/workspace-settings.ts';
import type { WorkspaceRow } from '../../store/workspaces.ts';
import { urlOrigin } from '../shared/secret-url.ts';

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

const seconds = z.int().min(0).max(315_360_000).nullable().optional();

/**
 * A workspace's settings: what workspaces_update takes (null resets one to the server's default)
 * and, every member present, both halves of its answer. One schema for all three, so the document
 * states it once (members optional, as an update needs them).
 */
export const workspaceSettings = z
  .strictObject({
    escalate_ask_s: seconds,
    escalate_approval_s: seconds,
    escalate_review_s: seconds,
    escalate_to: z
      .array(z.string().max(100).refine((to) => (targetRole(to) === undefined ? to !== '' && !/[\s,]/.test(to) : isRole(targetRole(to) ?? '')), 'a principal name or id, or role:<owner|admin|member|viewer>'))
      .min(1)
      .max(20)
      .nullable()
      .optional(),
    rate_limit: z.int().min(1).max(1_000_000).nullable().optional(),
    chat_webhook_url: z.url({ protocol: /^https?$/ }).max(2048).nullable().optional().describe('Answered in full to admins, as its origin to others: the URL is a secret.'),
    event_retention_days: z.int().min(1).max(36_500).nullable().optional().describe('Days events are kept; null in effective: for ever.'),
  });

export const workspaceSettingsOutput = z.object({ settings: workspaceSettings, effective: workspaceSettings });

/** A workspace's settings, and those in force: its own where set, the server's elsewhere. */
export function toWorkspaceSettings(row: WorkspaceRow, config: Pick<Config, 'escalation' | 'notify' | 'eventRetentionDays'>, reader: Principal): z.output<typeof workspaceSettingsOutput> {
  const shown = (url: string | null) => (url === null || reader.scopes.has('agents:admin') ? url : urlOrigin(url));
  const own = { escalate_ask_s: row.escalate_ask_s, escalate_approval_s: row.escalate_approval_s, escalate_review_s: row.escalate_review_s, escalate_to: row.escalate_to, rate_limit: row.rate_limit, event_retention_days: row.event_retention_days };
  const sla = effectiveEscalation(own, config.escalation);
  // The server's own channel is the operator's secret: every workspace sees its origin only.
  const serverChat = config.notify.chatWebhookUrl ? urlOrigin(config.notify.chatWebhookUrl) : null;
  return {
    // Whoever holds a chat webhook's URL can post to the channel: those who may not change it see its origin.
    settings: { ...own, chat_webhook_url: shown(row.chat_webhook_url) },
    effective: { escalate_ask_s: sla.askS, escalate_approval_s: sla.approvalS, escalate_review_s: sla.reviewS, escalate_to: [...sla.to], rate_limit: row.rate_limit, chat_webhook_url: shown(row.chat_webhook_url) ?? serverChat, event_retention_days: row.event_retention_days ?? config.eventRetentionDays ?? null },
  };
}
