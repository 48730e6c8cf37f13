import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listWebhooks as listWebhookRows } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { seesEveryWebhook, toWebhook, webhookOutput } from './webhook-schema.ts';

export const listWebhooks = defineOperation({
  name: 'webhooks_list',
  summary: 'List your webhook subscriptions (everyone\'s with agents:admin), oldest first.',
  kind: 'read',
  scope: 'webhooks:manage',
  approval: 'none',
  http: { method: 'GET', path: '/webhooks' },
  input: z.strictObject({ cursor: cursorParam, limit: limitParam }),
  output: pageSchema(webhookOutput),
  async run(db, ctx, input) {
    const afterId = ctx.cursors.decode('webhooks', input.cursor);
    const syncCursor = await latestEventId(db);
    const createdBy = seesEveryWebhook(ctx.actor) ? undefined : ctx.actor.id;
    const rows = await listWebhookRows(db, { afterId, limit: input.limit, createdBy });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('webhooks', row.id));
    return { data: page.rows.map(toWebhook), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
