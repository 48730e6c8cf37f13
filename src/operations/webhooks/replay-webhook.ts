import { z } from 'zod';
import { eventsAfter, lockWebhook, queueDeliveries } from '../../store/webhooks.ts';
import { defineOperation } from '../define-operation.ts';
import { sinceSeq } from '../shared/lists.ts';
import { ownerActsAlone, visibleWebhook, webhookId, webhookTarget } from './webhook-schema.ts';

/** One replay queues at most this many events; call again with `through` as `since` for more. */
const REPLAY_LIMIT = 1000;

export const replayWebhook = defineOperation({
  name: 'webhooks_replay',
  summary: 'Re-send what a webhook missed: queue every matching event strictly after `since` that it has not received (failed ones get a new round).',
  description: `Up to ${REPLAY_LIMIT} events per call, in commit order; \`since\` is the same cursor as the stream and GET /events. Delivered events are not sent twice. Runs at once for the webhook's owner.`,
  kind: 'write',
  scope: 'webhooks:manage',
  approval: 'outward',
  approvalTarget: webhookTarget,
  approvalWaived: ownerActsAlone,
  http: { method: 'POST', path: '/webhooks/{id}/replay', query: ['since'] },
  input: z.strictObject({
    id: webhookId,
    since: z.string().regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/, 'since must be an event id (evt_…)').describe('An event id: replay what came strictly after it.'),
  }),
  output: z.object({
    queued: z.int().describe('Deliveries queued (new, or failed ones due again).'),
    through: z.string().nullable().describe('The last event id looked at; pass it as `since` when `has_more`.'),
    has_more: z.boolean(),
  }),
  async run(tx, ctx, input) {
    const webhook = visibleWebhook(await lockWebhook(tx, input.id), ctx.actor, input.id);
    const after = await sinceSeq(tx, input.since);
    const events = await eventsAfter(tx, after, null, REPLAY_LIMIT + 1);
    const window = events.slice(0, REPLAY_LIMIT);
    const matching = webhook.event_types ? window.filter((e) => webhook.event_types?.includes(e.type)) : window;
    const queued = await queueDeliveries(
      tx,
      matching.map((e) => ({ id: ctx.ids.make('dlv'), webhook_id: webhook.id, event_id: e.id, event_seq: e.seq, now: ctx.now })),
      true,
    );
    const result = { queued, through: window.at(-1)?.id ?? null, has_more: events.length > REPLAY_LIMIT };
    ctx.emit({ type: 'webhook.replayed', subject: webhook.id, data: { since: input.since, ...result } });
    return result;
  },
});
