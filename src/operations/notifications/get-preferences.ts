import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { findPreferences } from '../../store/notifications.ts';
import { defineOperation } from '../define-operation.ts';
import { preferencesOutput } from './notification-schema.ts';

export const getPreferences = defineOperation({
  name: 'preferences_get',
  summary: 'Your notification preferences.',
  kind: 'read',
  scope: null,
  humanOnly: true,
  approval: 'none',
  toolset: 'admin',
  http: { method: 'GET', path: '/preferences/notifications' },
  input: z.strictObject({}),
  output: preferencesOutput,
  async run(db, ctx) {
    if (ctx.actor.kind !== 'human') throw new BatonError('human_required', 'Notifications are for people; agents use wait, the stream and webhooks.');
    const row = await findPreferences(db, ctx.actor.id);
    return { email: row.email, chat: row.chat, updated_at: row.updated_at?.toISOString() ?? null };
  },
});
