import { z } from 'zod';
import { DELIVERY_ATTEMPTS_MAX } from '../../config.ts';
import type { NotificationRow } from '../../store/notifications.ts';
import { attemptsOutput } from '../webhooks/webhook-schema.ts';

export const EMAIL_PREFERENCES = ['immediate', 'digest', 'off'] as const;
export const NOTIFICATION_STATES = ['pending', 'sent', 'failed', 'skipped'] as const;
export const NOTIFICATION_CHANNELS = ['email', 'chat'] as const;

export const preferencesOutput = z.object({
  email: z.enum(EMAIL_PREFERENCES),
  chat: z.boolean(),
  updated_at: z.iso.datetime().nullable(),
});

export const notificationOutput = z.object({
  inbox_item_id: z.string(),
  channel: z.enum(NOTIFICATION_CHANNELS),
  principal_id: z.string(),
  digest: z.boolean(),
  state: z.enum(NOTIFICATION_STATES),
  next_attempt_at: z.iso.datetime(),
  attempts: attemptsOutput,
  created_at: z.iso.datetime(),
  updated_at: z.iso.datetime(),
});

export function toNotification(row: NotificationRow): z.infer<typeof notificationOutput> {
  return {
    inbox_item_id: row.inbox_item_id,
    channel: row.channel,
    principal_id: row.principal_id,
    digest: row.digest,
    state: row.state,
    next_attempt_at: row.next_attempt_at.toISOString(),
    attempts: row.attempts.slice(-DELIVERY_ATTEMPTS_MAX),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}
