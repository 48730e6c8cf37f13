import { z } from 'zod';
import { findWebhook } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { toWebhook, visibleWebhook, webhookId, webhookOutput } from './webhook-schema.ts';

export const getWebhook = defineOperation({
  name: 'webhooks_get',
  summary: 'Read one webhook subscription: URL, event types, enabled, and why the server disabled it if it did.',
  description: "Another's webhook is 404 not_found here and in every webhook operation, unless you hold agents:admin or, as a human, approvals:decide.",
  kind: 'read',
  scope: 'webhooks:manage',
  approval: 'none',
  http: { method: 'GET', path: '/webhooks/{id}' },
  input: z.strictObject({ id: webhookId }),
  output: webhookOutput,
  version: (webhook) => webhook.version,
  async run(db, ctx, input) {
    // Another principal's webhook is answered as absent, so ids cannot be probed.
    return toWebhook(visibleWebhook(await findWebhook(db, input.id), ctx.actor, input.id));
  },
});
