import { z } from 'zod';
import { lockWebhook, updateWebhook as updateWebhookRow } from '../../store/webhooks.ts';
import { nextSecretRef, webhookSecret } from '../../webhook-secret.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { revealSecret, toWebhook, visibleWebhook, webhookId, webhookTarget, webhookWithSecret } from './webhook-schema.ts';

export const rotateWebhookSecret = defineOperation({
  name: 'webhooks_rotate_secret',
  summary: 'Issue a new signing secret for a webhook, shown once in this response; the old one stops verifying at once.',
  description:
    'For a leaked secret: deliveries from now on, retries too, are signed with the new one. ' +
    "Gated like creation: an agent's request waits for a human's approval; the requester alone then reads the secret there.",
  kind: 'write',
  scope: 'webhooks:manage',
  approval: 'outward',
  approvalTarget: webhookTarget,
  revealToRequester: revealSecret,
  http: { method: 'POST', path: '/webhooks/{id}/rotate-secret' },
  input: z.strictObject({ id: webhookId }),
  output: webhookWithSecret,
  version: (webhook) => webhook.version,
  redactForReplay: (output) => ({ ...output, secret: null }),
  async run(tx, ctx, input) {
    const row = visibleWebhook(await lockWebhook(tx, input.id), ctx.actor, input.id);
    assertVersion(`Webhook ${row.id}`, row.version, ctx.expectedVersion);
    const secretRef = nextSecretRef(row.secret_ref, row.id);
    const secret = webhookSecret(ctx.config.secretKey, secretRef, row.id);
    const updated = await updateWebhookRow(tx, row.id, { secret_ref: secretRef, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'webhook.secret_rotated', subject: row.id, data: { secret_ref: secretRef } });
    return { ...toWebhook(updated), secret };
  },
});
