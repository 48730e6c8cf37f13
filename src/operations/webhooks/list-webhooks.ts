import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listWebhooks as listWebhookRows } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, decodeCursor, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { toWebhook, webhookOutput } from './webhook-schema.ts';

export const listWebhooks = defineOperation({
  name: 'webhooks_list',
  summary: 'List webhook subscriptions, oldest first.',
  kind: 'read',
  scope: 'webhooks:manage',
  approval: 'none',
  http: { method: 'GET', path: '/webhooks' },
  input: z.strictObject({ cursor: cursorParam, limit: limitParam }),
  output: pageSchema(webhookOutput),
  async run(db, _ctx, input) {
    const syncCursor = await latestEventId(db);
    const rows = await listWebhookRows(db, { afterId: decodeCursor('webhooks', input.cursor), limit: input.limit });
    const page = paginate(rows, input.limit, 'webhooks', (row) => row.id);
    return { data: page.rows.map(toWebhook), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
