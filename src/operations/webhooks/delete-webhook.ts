import { z } from 'zod';
import { lockWebhook, updateWebhook } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { assertVersion } from '../shared/versions.ts';
import { ownerActsAlone, toWebhook, visibleWebhook, webhookId, webhookOutput, webhookTarget } from './webhook-schema.ts';

export const deleteWebhook = defineOperation({
  name: 'webhooks_delete',
  summary: 'Delete a webhook subscription: nothing more is delivered to it; its delivery log stays in the database.',
  description: "Runs at once for the webhook's owner.",
  kind: 'write',
  scope: 'webhooks:manage',
  approval: 'destructive',
  approvalTarget: webhookTarget,
  approvalWaived: ownerActsAlone,
  http: { method: 'DELETE', path: '/webhooks/{id}' },
  input: z.strictObject({ id: webhookId }),
  output: webhookOutput,
  async run(tx, ctx, input) {
    const row = visibleWebhook(await lockWebhook(tx, input.id), ctx.actor, input.id);
    assertVersion(`Webhook ${row.id}`, row.version, ctx.expectedVersion);
    const deleted = await updateWebhook(tx, row.id, { enabled: false, deleted_at: ctx.now, updated_at: ctx.now, updated_by_id: ctx.actor.id, updated_by_kind: ctx.actor.kind });
    ctx.emit({ type: 'webhook.deleted', subject: row.id, data: { url: row.url } });
    return toWebhook(deleted);
  },
});
