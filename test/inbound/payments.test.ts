import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';
import { eventsForProviderEvent, inboundCounts, postRaw } from './helpers.ts';

const SECRET = 'whsec_test_payments_secret_0123456789';
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ stripeWebhookSecret: SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

let seq = 0;
/** A Stripe event envelope as Stripe sends it. */
function stripeEvent(type: string, object: Record<string, unknown>): { id: string; body: string } {
  const id = `evt_test_${++seq}_${Date.now()}`;
  return { id, body: JSON.stringify({ id, object: 'event', type, api_version: '2025-01-27', created: Math.floor(Date.now() / 1000), data: { object } }, null, 2) };
}

function signed(body: string, options: { secret?: string; timestamp?: number } = {}) {
  const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: options.secret ?? SECRET, ...(options.timestamp ? { timestamp: options.timestamp } : {}) });
  return { 'stripe-signature': header, 'content-type': 'application/json; charset=utf-8' };
}

const billing = (customer: string) => t.database.db.selectFrom('billing_accounts').selectAll().where('customer_id', '=', customer).executeTakeFirst();

describe('POST /webhooks/payments (signed with the stripe package)', () => {
  it('handles a checkout once: the replay is a 200 that changes nothing', async () => {
    const event = stripeEvent('checkout.session.completed', {
      id: 'cs_test_1',
      object: 'checkout.session',
      customer: 'cus_one',
      subscription: 'sub_one',
      customer_details: { email: 'billing@example.com' },
    });
    const first = await postRaw(t, '/webhooks/payments', event.body, signed(event.body));
    expect(first.status, first.body).toBe(200);
    const receipt = first.json<{ received: boolean; duplicate: boolean; event_id: string }>();
    expect(receipt).toMatchObject({ received: true, duplicate: false });
    expect(await billing('cus_one')).toMatchObject({ checkout_session_id: 'cs_test_1', subscription_id: 'sub_one', email: 'billing@example.com', version: 1 });
    const events = await eventsForProviderEvent(t, event.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: receipt.event_id, type: 'payment.checkout_completed', subject: 'cus_one', actor_id: 'system', actor_kind: 'system' });

    const before = await inboundCounts(t);
    // Stripe signs each delivery attempt afresh: a new header over the same event.
    const replay = await postRaw(t, '/webhooks/payments', event.body, signed(event.body));
    expect(replay.status).toBe(200);
    expect(replay.json()).toEqual({ received: true, duplicate: true, event_id: receipt.event_id });
    expect(await inboundCounts(t)).toEqual(before);
    expect((await billing('cus_one'))?.version).toBe(1);
  });

  it('keeps the billing record through subscription and invoice events', async () => {
    const steps: [string, Record<string, unknown>, Record<string, unknown>][] = [
      ['customer.subscription.updated', { id: 'sub_two', customer: 'cus_two', status: 'active', items: { data: [{ price: { id: 'price_pro' } }] } }, { subscription_status: 'active', price_id: 'price_pro' }],
      ['invoice.paid', { id: 'in_1', customer: { id: 'cus_two', object: 'customer' } }, { last_invoice_id: 'in_1', last_invoice_status: 'paid' }],
      ['invoice.payment_failed', { id: 'in_2', customer: 'cus_two' }, { last_invoice_id: 'in_2', last_invoice_status: 'payment_failed' }],
      ['customer.subscription.deleted', { id: 'sub_two', customer: 'cus_two', status: 'canceled' }, { subscription_status: 'canceled' }],
    ];
    for (const [type, object, expected] of steps) {
      const event = stripeEvent(type, object);
      const res = await postRaw(t, '/webhooks/payments', event.body, signed(event.body));
      expect(res.status, res.body).toBe(200);
      expect(await billing('cus_two'), type).toMatchObject(expected);
    }
    expect((await billing('cus_two'))?.version).toBe(4);
  });

  it('acknowledges and records an unknown event type without changing anything', async () => {
    const event = stripeEvent('charge.refunded', { id: 'ch_1', customer: 'cus_three' });
    const res = await postRaw(t, '/webhooks/payments', event.body, signed(event.body));
    expect(res.status).toBe(200);
    const events = await eventsForProviderEvent(t, event.id);
    expect(events.map((e) => [e.type, e.actor_kind])).toEqual([['payment.received', 'system']]);
    expect(await billing('cus_three')).toBeUndefined();
  });

  it('refuses a tampered body, a stale timestamp and a wrong secret with 400 and records nothing', async () => {
    const before = await inboundCounts(t);
    const event = stripeEvent('invoice.paid', { id: 'in_9', customer: 'cus_four' });
    const tampered = event.body.replace('in_9', 'in_8');
    expectProblem(await postRaw(t, '/webhooks/payments', tampered, signed(event.body)), 400, 'invalid_signature');
    const stale = Math.floor(Date.now() / 1000) - 600;
    expectProblem(await postRaw(t, '/webhooks/payments', event.body, signed(event.body, { timestamp: stale })), 400, 'invalid_signature');
    expectProblem(await postRaw(t, '/webhooks/payments', event.body, signed(event.body, { secret: 'whsec_someone_else' })), 400, 'invalid_signature');
    expectProblem(await postRaw(t, '/webhooks/payments', event.body, { 'content-type': 'application/json' }), 400, 'invalid_signature');
    expect(await inboundCounts(t)).toEqual(before);
    expect(await billing('cus_four')).toBeUndefined();
  });

  it('answers 503 not_configured on the auth route and on cron when their secrets are unset, recording nothing', async () => {
    const before = await inboundCounts(t);
    expectProblem(await postRaw(t, '/webhooks/auth', '{}', { 'content-type': 'application/json' }), 503, 'not_configured');
    expectProblem(await t.request('GET', '/cron/keepalive', { token: null }), 503, 'not_configured');
    expect(await inboundCounts(t)).toEqual(before);
  });
});
