import type { Kysely } from 'kysely';
import { z } from 'zod';
import type { Clock } from '../../clock.ts';
import type { EventType } from '../../domain/event-types.ts';
import { SYSTEM_ACTOR } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import type { Ids } from '../../ids.ts';
import { textIssues } from '../../operations/shared/text.ts';
import { appendEvents } from '../../store/events.ts';
import { type InboundProvider, recordDelivery } from '../../store/inbound.ts';
import type { DB } from '../../store/schema.ts';
import { handleAuthEvent } from './auth.ts';
import { handlePaymentEvent } from './payments.ts';
import type { Tx } from '../../store/connection.ts';

/** A provider's event whose signature the inbound adapter has verified. */
export interface InboundEvent {
  readonly provider: InboundProvider;
  /** The provider's own event id (Stripe `evt_…`, the Svix message id): the dedupe key. */
  readonly id: string;
  /** The provider's event type, e.g. `invoice.paid`, `user.created`. */
  readonly type: string;
  /** The object the event is about (Stripe's `data.object`, the auth provider's `data`). */
  readonly object: Record<string, unknown>;
  /** When the provider signed the delivery (its verified timestamp). */
  readonly sentAt: Date;
}

export interface InboundReceipt {
  readonly received: true;
  /** True when this provider event id was accepted before: nothing changed this time. */
  readonly duplicate: boolean;
  /** The Baton event recorded for the (first) delivery. */
  readonly event_id: string;
}

/** What a handler did, as the one Baton event recorded for the delivery. */
export interface Handled {
  readonly type: EventType;
  readonly subject: string;
  readonly data: Record<string, unknown>;
}

export interface HandlerContext {
  readonly now: Date;
  readonly ids: Ids;
}

export type InboundHandler = (tx: Tx, event: InboundEvent, ctx: HandlerContext) => Promise<Handled>;

const HANDLERS: Record<InboundProvider, InboundHandler> = { payments: handlePaymentEvent, auth: handleAuthEvent };

/**
 * Applies one verified provider event exactly once: in ONE transaction it claims the provider's
 * event id, runs the handler for the event type (unknown types are only recorded) and appends one
 * event by the `system` actor. A replay of the same provider event id changes nothing and returns
 * the first delivery's event id.
 */
export async function receiveInbound(deps: { db: Kysely<DB>; clock: Clock; ids: Ids }, event: InboundEvent): Promise<InboundReceipt> {
  const unsafe = textIssues({ id: event.id, type: event.type, object: event.object });
  if (unsafe.length > 0) {
    const where = unsafe.map((issue) => `/${issue.path.join('/')}: ${issue.detail}`).join('; ');
    throw new BatonError('validation_failed', `${event.provider} event ${JSON.stringify(event.id)} cannot be recorded: ${where}`);
  }
  return deps.db.transaction().execute(async (tx) => {
    const now = deps.clock.now();
    const delivery = await recordDelivery(tx, {
      provider: event.provider,
      provider_event_id: event.id,
      provider_type: event.type,
      event_id: deps.ids.make('evt'),
      received_at: now,
    });
    if (!delivery.first) return { received: true, duplicate: true, event_id: delivery.eventId };
    const handled = await HANDLERS[event.provider](tx, event, { now, ids: deps.ids });
    await appendEvents(tx, [
      {
        id: delivery.eventId,
        type: handled.type,
        subject: handled.subject,
        actor_id: SYSTEM_ACTOR.id,
        actor_kind: SYSTEM_ACTOR.kind,
        token_id: null,
        machine: null,
        idempotency_key: null,
        data: { provider: event.provider, provider_event_id: event.id, provider_type: event.type, ...handled.data },
        created_at: now,
      },
    ]);
    return { received: true, duplicate: false, event_id: delivery.eventId };
  });
}

/** The event's object read with the given schema; a signed but unusable payload is a 400 that records nothing. */
export function readObject<T>(schema: z.ZodType<T>, event: InboundEvent): T {
  const parsed = schema.safeParse(event.object);
  if (parsed.success) return parsed.data;
  throw new BatonError('validation_failed', `${event.provider} event ${event.id} (${event.type}) has an unexpected shape: ${z.prettifyError(parsed.error)}`);
}
