import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findPreferences, upsertPreferences } from '../../store/notifications.ts';
import { defineOperation } from '../define-operation.ts';
import { EMAIL_PREFERENCES, preferencesOutput } from './notification-schema.ts';

export const updatePreferences = defineOperation({
  name: 'preferences_update',
  summary: 'Change your notification preferences (email: immediate, digest or off; chat).',
  kind: 'write',
  scope: null,
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'PATCH', path: '/preferences/notifications' },
  input: z.strictObject({ email: z.enum(EMAIL_PREFERENCES).optional(), chat: z.boolean().optional() }),
  output: preferencesOutput,
  async run(tx, ctx, input) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Notifications are for people; agents use wait, the stream and webhooks.');
    const now = await findPreferences(tx, ctx.actor.id);
    const row = await upsertPreferences(tx, { principal_id: ctx.actor.id, email: input.email ?? now.email, chat: input.chat ?? now.chat, updated_at: ctx.now });
    return { email: row.email, chat: row.chat, updated_at: row.updated_at.toISOString() };
  },
});
