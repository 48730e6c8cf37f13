import { z } from 'zod';
import { latestEventId } from '../../store/events.ts';
import { listNotifications as listNotificationRows } from '../../store/notifications.ts';
import { agentId } from '../agents/agent-schema.ts';
import { defineOperation } from '../define-operation.ts';
import { cursorParam, limitParam, pageSchema, paginate } from '../shared/lists.ts';
import { NOTIFICATION_CHANNELS, NOTIFICATION_STATES, notificationOutput, toNotification } from './notification-schema.ts';

export const listNotifications = defineOperation({
  name: 'notifications_list',
  summary: 'The notification outbox, newest first, with every attempt.',
  kind: 'read',
  scope: 'agents:admin',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/notifications' },
  input: z.strictObject({
    state: z.enum(NOTIFICATION_STATES).optional(),
    channel: z.enum(NOTIFICATION_CHANNELS).optional(),
    principal_id: agentId.optional(),
    cursor: cursorParam,
    limit: limitParam,
  }),
  output: pageSchema(notificationOutput),
  async run(db, ctx, input) {
    const position = ctx.cursors.decode('notifications', input.cursor)?.split(' ');
    const syncCursor = await latestEventId(db);
    const rows = await listNotificationRows(db, {
      states: input.state ? [input.state] : undefined,
      channel: input.channel,
      principalId: input.principal_id,
      before: position ? [position[0] ?? '', position[1] ?? ''] : undefined,
      limit: input.limit,
    });
    const page = paginate(rows, input.limit, (row) => ctx.cursors.encode('notifications', `${row.inbox_item_id} ${row.channel}`));
    return { data: page.rows.map(toNotification), has_more: page.has_more, next_cursor: page.next_cursor, sync_cursor: syncCursor };
  },
});
