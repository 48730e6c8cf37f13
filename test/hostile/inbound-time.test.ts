import { randomBytes } from 'node:crypto';
import Stripe from 'stripe';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { inboundCounts, postRaw } from '../inbound/helpers.ts';
import { expectProblem } from '../rest/fixtures.ts';

const STRIPE_SECRET = 'whsec_test_payments_secret_0123456789';
const AUTH_SECRET = `whsec_${randomBytes(24).toString('base64')}`;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ stripeWebhookSecret: STRIPE_SECRET, authWebhookSecret: AUTH_SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

/** A delivery to each inbound route, signed with the provider's own library `offsetS` seconds from now. */
const ROUTES = {
  payments: (offsetS: number) => {
    const id = `evt_time_${randomBytes(6).toString('hex')}`;
    const body = JSON.stringify({ id, object: 'event', type: 'invoice.paid', created: Math.floor(Date.now() / 1000), data: { object: { id: 'in_1', object: 'invoice', customer: 'cus_time' } } });
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET, timestamp: Math.floor(Date.now() / 1000) + offsetS });
    return postRaw(t, '/webhooks/payments', body, { 'stripe-signature': header, 'content-type': 'application/json' });
  },
  auth: (offsetS: number) => {
    const id = `msg_${randomBytes(6).toString('hex')}`;
    const at = new Date(Date.now() + offsetS * 1000);
    const body = JSON.stringify({ type: 'session.created', object: 'event', data: { id: 'sess_1', user_id: 'user_time' } });
    const headers = { 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': new Webhook(AUTH_SECRET).sign(id, at, body), 'content-type': 'application/json' };
    return postRaw(t, '/webhooks/auth', body, headers);
  },
};

describe('inbound signatures: the same 5-minute tolerance both ways on both routes', () => {
  for (const [route, send] of Object.entries(ROUTES)) {
    it.each([10 * 60, 3600, 365 * 86_400, -10 * 60, -3600])(`${route}: a signature dated %i s from now is 400 invalid_signature, nothing recorded`, async (offset) => {
      const before = await inboundCounts(t);
      const problem = expectProblem(await send(offset), 400, 'invalid_signature');
      expect(problem.retryable).toBe(false);
      expect(await inboundCounts(t)).toEqual(before);
    });

    it.each([4 * 60, -4 * 60, 0])(`${route}: a signature dated %i s from now is accepted`, async (offset) => {
      const res = await send(offset);
      expect(res.status, res.body).toBe(200);
    });
  }
});
