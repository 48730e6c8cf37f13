import { z } from 'zod';
import { latestSeq } from '../../store/events.ts';
import { insertWebhook } from '../../store/webhooks.ts';
import { resolveDestination } from '../../webhook-destination.ts';
import { DERIVED_V1, webhookSecret } from '../../webhook-secret.ts';
import { defineOperation } from '../define-operation.ts';
import { eventTypeFilter, revealSecret, toWebhook, webhookUrl, webhookWithSecret } from './webhook-schema.ts';

export const createWebhook = defineOperation({
  name: 'webhooks_create',
  summary: 'Subscribe a URL to events: each matching event is POSTed there, signed (Standard Webhooks); the secret is in this response only.',
  description:
    'Outward-facing, so an agent\'s request waits for a human\'s approval. Delivers the events after creation; replay reaches back.',
  kind: 'write',
  scope: 'webhooks:manage',
  approval: 'outward',
  http: { method: 'POST', path: '/webhooks', successStatus: 201 },
  input: z.strictObject({ url: webhookUrl, event_types: eventTypeFilter.optional(), enabled: z.boolean().default(true) }),
  output: webhookWithSecret,
  redactForReplay: (output) => ({ ...output, secret: null }),
  revealToRequester: revealSecret,
  async run(tx, ctx, input) {
    const id = ctx.ids.make('whk');
    const secret = webhookSecret(ctx.config.secretKey, DERIVED_V1, id);
    await resolveDestination(input.url, ctx.config.webhookAllowPrivate);
    const by = { id: ctx.actor.id, kind: ctx.actor.kind };
    const row = await insertWebhook(tx, {
      id,
      url: input.url,
      event_types: input.event_types ?? null,
      enabled: input.enabled,
      secret_ref: DERIVED_V1,
      cursor_seq: await latestSeq(tx),
      disabled_reason: null,
      deleted_at: null,
      created_at: ctx.now,
      created_by_id: by.id,
      created_by_kind: by.kind,
      updated_at: ctx.now,
      updated_by_id: by.id,
      updated_by_kind: by.kind,
    });
    ctx.emit({ type: 'webhook.created', subject: row.id, data: { url: row.url, event_types: row.event_types, enabled: row.enabled } });
    return { ...toWebhook(row), secret };
  },
});
