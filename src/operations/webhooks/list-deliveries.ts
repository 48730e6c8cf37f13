import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { findWebhook, listDeliveries as listDeliveryRows } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { deliveryOutput, toDelivery, visibleWebhook, webhookId } from './webhook-schema.ts';

export const listDeliveries = defineOperation({
  name: 'webhooks_deliveries',
  summary: 'The delivery log of one webhook, newest event first: state, next attempt, and every attempt with status, duration and error.',
  kind: 'read',
  scope: 'webhooks:manage',
  approval: 'none',
  http: { method: 'GET', path: '/webhooks/{id}/deliveries' },
  input: z.strictObject({ id: webhookId, cursor: cursorParam, limit: limitParam }),
  output: pageSchema(deliveryOutput),
  async run(db, ctx, input) {
    const beforeSeq = ctx.cursors.decode('deliveries', input.cursor);
    const syncCursor = await latestEventId(db);
    visibleWebhook(await findWebhook(db, input.id), ctx.actor, input.id);
    const rows = await listDeliveryRows(db, input.id, { beforeSeq, limit: input.limit });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('deliveries', row.event_seq));
    return { data: page.rows.map(toDelivery), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
