import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import Stripe from 'stripe';
import { Webhook, WebhookVerificationError } from 'svix';
import { z } from 'zod';
import type { Config } from '../../config.ts';
import { BatonError } from '../../errors.ts';
import type { InboundEvent } from '../../service/inbound/receive.ts';
import type { Service } from '../../service/service.ts';

type Verified = Omit<InboundEvent, 'provider'>;

interface InboundRoute {
  readonly provider: InboundEvent['provider'];
  readonly url: string;
  /** The config entry holding the signing secret, and its variable name for the 503. */
  readonly secret: (config: Config) => string | undefined;
  readonly variable: string;
  /** Verifies the raw body's signature with the provider's own library; throws `invalid_signature`. */
  readonly verify: (raw: Buffer, headers: IncomingHttpHeaders, secret: string, now: Date) => Verified;
}

const ROUTES: readonly InboundRoute[] = [
  { provider: 'payments', url: '/webhooks/payments', secret: (c) => c.stripeWebhookSecret, variable: 'STRIPE_WEBHOOK_SECRET', verify: verifyStripe },
  { provider: 'auth', url: '/webhooks/auth', secret: (c) => c.authWebhookSecret, variable: 'AUTH_WEBHOOK_SECRET', verify: verifySvix },
];

/**
 * The inbound webhook routes. In their own scope every body arrives as raw bytes, so the signature
 * is checked over exactly what the provider signed before anything is parsed; the verified event
 * then goes to the service layer, which dedupes and records it.
 */
export async function registerInboundRoutes(app: FastifyInstance, service: Service): Promise<void> {
  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));
    for (const route of ROUTES) {
      scope.post(route.url, async (request, reply) => {
        const secret = route.secret(service.config);
        if (!secret) throw new BatonError('not_configured', `${route.url} is off: ${route.variable} is not set on this server.`);
        const verified = verifyOrLog(route, request, secret, service.clock.now());
        const receipt = await service.receiveInbound({ provider: route.provider, ...verified });
        return reply.type('application/json; charset=utf-8').send(JSON.stringify(receipt));
      });
    }
  });
}

/** How far a signed timestamp may be from the server's clock, in the past or in the future, on both routes. */
const SIGNATURE_TOLERANCE_S = 300;

function verifyOrLog(route: InboundRoute, request: FastifyRequest, secret: string, now: Date): Verified {
  const raw = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  try {
    const verified = route.verify(raw, request.headers, secret, now);
    // The libraries differ (Stripe refuses only old timestamps), so the rule is applied here once for both.
    const skewS = (verified.sentAt.getTime() - now.getTime()) / 1000;
    if (!(Math.abs(skewS) <= SIGNATURE_TOLERANCE_S)) {
      throw new BatonError('invalid_signature', `The signed timestamp is ${Math.round(Math.abs(skewS))} s ${skewS > 0 ? 'ahead of' : 'behind'} the server's clock; at most ${SIGNATURE_TOLERANCE_S} s either way is accepted.`);
    }
    return verified;
  } catch (error) {
    if (error instanceof BatonError && error.code === 'invalid_signature') {
      request.log.warn({ provider: route.provider, reason: error.detail }, 'inbound webhook refused: bad signature');
    }
    throw error;
  }
}

function verifyStripe(raw: Buffer, headers: IncomingHttpHeaders, secret: string, now: Date): Verified {
  let event: Stripe.Event;
  const header = headers['stripe-signature'] ?? '';
  try {
    // Stripe checks that the signed timestamp is at most 300 s old (by the server's clock); verifyOrLog adds the future bound.
    event = Stripe.webhooks.constructEvent(raw, header, secret, SIGNATURE_TOLERANCE_S, undefined, Math.floor(now.getTime() / 1000));
  } catch (error) {
    if (error instanceof Stripe.errors.StripeSignatureVerificationError) throw new BatonError('invalid_signature', `Stripe-Signature rejected: ${error.message}`);
    throw new BatonError('malformed_json', 'The signed body is not a JSON event.');
  }
  // The signed time is the header's `t=` (a retried delivery is signed anew; `event.created` stays old).
  const signedAt = Number(/(?:^|,)\s*t=(\d+)/.exec(Array.isArray(header) ? header.join(',') : header)?.[1]);
  return { id: event.id, type: event.type, object: event.data.object as unknown as Record<string, unknown>, sentAt: new Date(signedAt * 1000) };
}

const svixEnvelope = z.looseObject({ type: z.string().min(1), data: z.record(z.string(), z.unknown()) });

function verifySvix(raw: Buffer, headers: IncomingHttpHeaders, secret: string): Verified {
  const signed = Object.fromEntries(Object.entries(headers).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
  try {
    // Svix checks the timestamp too: at most 5 minutes off.
    new Webhook(secret).verify(raw, signed);
  } catch (error) {
    if (error instanceof WebhookVerificationError) throw new BatonError('invalid_signature', `Svix signature rejected: ${error.message}`);
    throw error;
  }
  let body: unknown;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BatonError('malformed_json', 'The signed body is not JSON.');
  }
  const envelope = svixEnvelope.safeParse(body);
  if (!envelope.success) throw new BatonError('validation_failed', `The auth event has no type or data: ${z.prettifyError(envelope.error)}`);
  const timestamp = Number(signed['svix-timestamp'] ?? signed['webhook-timestamp']);
  return { id: signed['svix-id'] ?? signed['webhook-id'] ?? '', type: envelope.data.type, object: envelope.data.data, sentAt: new Date(timestamp * 1000) };
}
