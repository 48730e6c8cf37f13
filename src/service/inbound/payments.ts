import { z } from 'zod';
import type { EventType } from '../../domain/event-types.ts';
import { type BillingChanges, upsertBillingAccount } from '../../store/billing.ts';
import { type Handled, type HandlerContext, type InboundEvent, readObject } from './receive.ts';
import type { Tx } from '../../store/connection.ts';

/** Stripe's expandable references: an id, or the expanded object carrying it. */
const ref = z.union([z.string(), z.looseObject({ id: z.string() }).transform((o) => o.id)]).nullish();

/** The fields of Stripe's checkout session, subscription and invoice objects that the billing record keeps. */
const stripeObject = z.looseObject({
  id: z.string(),
  customer: ref,
  subscription: ref,
  status: z.string().nullish(),
  customer_email: z.string().nullish(),
  customer_details: z.looseObject({ email: z.string().nullish() }).nullish(),
  items: z.looseObject({ data: z.array(z.looseObject({ price: z.looseObject({ id: z.string() }).nullish() })) }).nullish(),
});
type StripeObject = z.infer<typeof stripeObject>;

interface PaymentRule {
  readonly type: EventType;
  readonly changes: (o: StripeObject) => BillingChanges;
}

const subscriptionChanges = (o: StripeObject): BillingChanges => ({
  subscription_id: o.id,
  subscription_status: o.status ?? null,
  price_id: o.items?.data[0]?.price?.id ?? null,
});

/** Stripe event type → what it changes on the customer's billing record. */
const RULES: Readonly<Record<string, PaymentRule>> = {
  'checkout.session.completed': {
    type: 'payment.checkout_completed',
    changes: (o) => ({ checkout_session_id: o.id, subscription_id: o.subscription ?? null, email: o.customer_details?.email ?? o.customer_email ?? null }),
  },
  'customer.subscription.created': { type: 'payment.subscription_updated', changes: subscriptionChanges },
  'customer.subscription.updated': { type: 'payment.subscription_updated', changes: subscriptionChanges },
  'customer.subscription.deleted': { type: 'payment.subscription_deleted', changes: (o) => ({ ...subscriptionChanges(o), subscription_status: o.status ?? 'canceled' }) },
  'invoice.paid': { type: 'payment.invoice_paid', changes: (o) => ({ last_invoice_id: o.id, last_invoice_status: 'paid' }) },
  'invoice.payment_failed': { type: 'payment.invoice_failed', changes: (o) => ({ last_invoice_id: o.id, last_invoice_status: 'payment_failed' }) },
};

/**
 * Keeps the billing record of the event's customer (Baton is one workspace per deployment, so the
 * record is keyed by the Stripe customer id). Unknown types, and events without a customer, are
 * recorded as `payment.received` and change nothing.
 */
export async function handlePaymentEvent(tx: Tx, event: InboundEvent, ctx: HandlerContext): Promise<Handled> {
  const rule = RULES[event.type];
  const object = rule ? readObject(stripeObject, event) : undefined;
  const customer = object?.customer;
  if (!rule || !object || !customer) {
    return { type: 'payment.received', subject: event.id, data: { handled: false, object_id: event.object.id ?? null } };
  }
  const changes = Object.fromEntries(Object.entries(rule.changes(object)).filter(([, v]) => v !== null)) as BillingChanges;
  const account = await upsertBillingAccount(tx, customer, changes, ctx.now);
  return { type: rule.type, subject: customer, data: { handled: true, object_id: object.id, changes, billing_version: account.version } };
}
