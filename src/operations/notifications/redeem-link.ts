import { z } from 'zod';
import { BatonError } from '../../errors.ts';
import { readLink, linkKey } from '../../notification-link.ts';
import { findAsk } from '../../store/asks.ts';
import { useLink } from '../../store/notifications.ts';
import { readCursorKey } from '../../store/server-keys.ts';
import { answer } from '../asks/answer-ask.ts';
import { askOutput } from '../asks/ask-schema.ts';
import { defineOperation } from '../define-operation.ts';

export const redeemLink = defineOperation({
  name: 'links_redeem',
  summary: 'Use a link from a notification, once: what it opens; an option link answers the ask.',
  kind: 'write',
  scope: 'tasks:write',
  approval: 'none',
  toolset: 'admin',
  http: { method: 'POST', path: '/links/redeem' },
  input: z.strictObject({ token: z.string().min(1).max(2000) }),
  output: z.object({ task_id: z.string(), inbox_item_id: z.string(), ask_id: z.string().nullable(), answered: askOutput.nullable() }),
  async run(tx, ctx, input) {
    const claims = readLink(linkKey(await readCursorKey(tx)), input.token);
    // Someone else's link reads as no link at all: it says nothing about their inbox. Links are made
    // for people only, so an agent's every link is this.
    if (!claims || claims.to !== ctx.actor.id) throw new BatonError('link_invalid', 'This link was not issued by this server to you.');
    if (claims.exp * 1000 <= ctx.now.getTime()) throw new BatonError('link_expired', `This link expired at ${new Date(claims.exp * 1000).toISOString()}.`);
    if (!(await useLink(tx, claims.id, ctx.actor.id, ctx.now))) throw new BatonError('link_used', 'This link was used already.');
    let answered = null;
    if (claims.ask !== undefined && claims.option !== undefined) {
      const option = (await findAsk(tx, claims.ask))?.options[claims.option]?.label;
      answered = await answer(tx, ctx, { id: claims.ask, option });
    }
    return { task_id: claims.task, inbox_item_id: claims.item, ask_id: claims.ask ?? null, answered };
  },
});
