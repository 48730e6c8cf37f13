import { z } from 'zod';
import type { Updateable } from 'kysely';
import { latestSeq } from '../../store/events.ts';
import type { WebhooksTable } from '../../store/schema.ts';
import { lockWebhook, updateWebhook as updateWebhookRow } from '../../store/webhooks.ts';
import { resolveDestination } from '../../webhook-destination.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { eventTypeFilter, toWebhook, visibleWebhook, webhookId, webhookOutput, webhookTarget, webhookUrl } from './webhook-schema.ts';

export const updateWebhook = defineOperation({
  name: 'webhooks_update',
  summary: 'Change a webhook\'s URL or event types, or enable or disable it; re-enabling delivers from now on (replay reaches back).',
  description: "Outward-facing (it can point deliveries somewhere new), so an agent's request waits for a human's approval.",
  kind: 'write',
  scope: 'webhooks:manage',
  approval: 'outward',
  http: { method: 'PATCH', path: '/webhooks/{id}' },
  input: z
    .strictObject({ id: webhookId, url: webhookUrl.optional(), event_types: eventTypeFilter.optional(), enabled: z.boolean().optional() })
    .refine((i) => Object.keys(i).length > 1, 'send at least one of url, event_types, enabled'),
  output: webhookOutput,
  version: (webhook) => webhook.version,
  approvalTarget: webhookTarget,
  async run(tx, ctx, input) {
    const row = visibleWebhook(await lockWebhook(tx, input.id), ctx.actor, input.id);
    assertVersion(`Webhook ${row.id}`, row.version, ctx.expectedVersion);
    if (input.url !== undefined) await resolveDestination(input.url, ctx.config.webhookAllowPrivate);
    const changes: Updateable<WebhooksTable> = {};
    if (input.url !== undefined && input.url !== row.url) changes.url = input.url;
    if (input.event_types !== undefined && JSON.stringify(input.event_types) !== JSON.stringify(row.event_types)) changes.event_types = input.event_types;
    if (input.enabled !== undefined && input.enabled !== row.enabled) {
      changes.enabled = input.enabled;
      // Re-enabled: deliver from now; what happened meanwhile is a replay away.
      if (input.enabled) Object.assign(changes, { disabled_reason: null, cursor_seq: await latestSeq(tx) });
    }
    const changed = Object.keys(changes).filter((k) => k !== 'disabled_reason' && k !== 'cursor_seq');
    if (changed.length === 0) return toWebhook(row);
    const updated = await updateWebhookRow(tx, row.id, { ...changes, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'webhook.updated', subject: row.id, data: { changes: Object.fromEntries(changed.map((k) => [k, { from: row[k as keyof typeof row], to: updated[k as keyof typeof updated] }])) } });
    return toWebhook(updated);
  },
});
