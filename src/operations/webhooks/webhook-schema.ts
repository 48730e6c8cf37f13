import { z } from 'zod';
import { DELIVERY_ATTEMPTS_MAX } from '../../config.ts';
import { EVENT_TYPES } from '../../domain/event-types.ts';
import type { ActorKind } from '../../domain/scopes.ts';
import { BatonError } from '../../errors.ts';
import { idPattern } from '../../ids.ts';
import type { Kysely } from 'kysely';
import type { Principal } from '../../domain/principal.ts';
import type { DB } from '../../store/schema.ts';
import { type DeliveryRow, findWebhook, type WebhookRow } from '../../store/webhooks.ts';
import { webhookSecret } from '../../webhook-secret.ts';
import type { ApprovalTarget, OperationContext } from '../define-operation.ts';
import { actorRef } from '../tasks/task-schema.ts';

export const webhookId = z.string().regex(new RegExp(idPattern('whk')), 'must be a webhook id: whk_ followed by a 26-character ULID');
export const webhookUrl = z.string().max(2048).describe('Where events are POSTed: http(s), resolving only to public addresses.');
export const eventTypeFilter = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .nullable()
  .describe('Event types to deliver; null (default) means every type.');

export const webhookOutput = z.object({
  id: z.string(),
  url: z.string(),
  event_types: z.array(z.string()).max(EVENT_TYPES.length).nullable(),
  enabled: z.boolean(),
  disabled_reason: z.string().nullable().describe('Why the server disabled it (failing deliveries, 410 Gone); null otherwise.'),
  secret_ref: z.string().describe('How the signing secret is found (`derived:v1`); the secret itself is never stored.'),
  version: z.int(),
  created_at: z.iso.datetime(),
  created_by: actorRef,
  updated_at: z.iso.datetime(),
  updated_by: actorRef,
});

/**
 * A webhook with its signing secret: the answer of webhooks_create and webhooks_rotate_secret, the
 * one time the secret is shown (the OpenAPI document's `WebhookWithSecret`).
 */
export const webhookWithSecret = webhookOutput.extend({
  secret: z.string().nullable().describe('The signing secret (whsec_…), shown once: store it now. A replay answers null; after an approval, the requester alone reads it there.'),
});

export function toWebhook(row: WebhookRow): z.infer<typeof webhookOutput> {
  return {
    id: row.id,
    url: row.url,
    event_types: row.event_types,
    enabled: row.enabled,
    disabled_reason: row.disabled_reason,
    secret_ref: row.secret_ref,
    version: row.version,
    created_at: row.created_at.toISOString(),
    created_by: { id: row.created_by_id, kind: row.created_by_kind as ActorKind },
    updated_at: row.updated_at.toISOString(),
    updated_by: { id: row.updated_by_id, kind: row.updated_by_kind as ActorKind },
  };
}

/** Every attempt of a delivery or a notification (one component, Attempts). */
export const attemptsOutput = z
  .array(z.object({ at: z.iso.datetime(), status: z.int().nullable(), duration_ms: z.int(), error: z.string().nullable() }))
  .max(DELIVERY_ATTEMPTS_MAX)
  .describe('Every attempt, oldest first: the HTTP status or SMTP reply code (null when none came back), how long it took, and what went wrong.');

export const deliveryOutput = z.object({
  id: z.string(),
  webhook_id: z.string(),
  event_id: z.string().describe('Also the `webhook-id` header: receivers deduplicate by it.'),
  state: z.enum(['pending', 'delivered', 'failed']),
  next_attempt_at: z.iso.datetime().nullable().describe('When the next attempt is due, while pending.'),
  attempts: attemptsOutput,
  created_at: z.iso.datetime(),
});

export function toDelivery(row: DeliveryRow): z.infer<typeof deliveryOutput> {
  return {
    id: row.id,
    webhook_id: row.webhook_id,
    event_id: row.event_id,
    state: row.state,
    next_attempt_at: row.state === 'pending' ? row.next_attempt_at.toISOString() : null,
    attempts: row.attempts,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * A webhook belongs to its creator. Its owner, a holder of `agents:admin` and a human who decides
 * approvals may read it and act on it (through the operation's own gate); to anyone else it is
 * absent on every route, `404 not_found` as for an id that never existed (spec/realtime.md, "Ownership").
 */
function mayAccess(actor: Principal, row: Pick<WebhookRow, 'created_by_id'>): boolean {
  return row.created_by_id === actor.id || seesEveryWebhook(actor);
}

/** Holders of `agents:admin` and humans who decide approvals see every principal's webhooks. */
export function seesEveryWebhook(actor: Principal): boolean {
  return actor.scopes.has('agents:admin') || (actor.kind === 'human' && actor.scopes.has('approvals:decide'));
}

/** `approvalWaived` of the webhook writes that need no approval from those who may act on the webhook. */
export async function ownerActsAlone(db: Kysely<DB>, actor: Principal, input: { id: string }): Promise<boolean> {
  const row = await findWebhook(db, input.id);
  return row !== undefined && mayAccess(actor, row);
}

/** `approvalTarget` of the gated webhook writes: the webhook at its current version; not_found to whom it is hidden. */
export async function webhookTarget(db: Kysely<DB>, input: { id: string }, actor?: Principal): Promise<ApprovalTarget> {
  const row = await findWebhook(db, input.id);
  if (!row || (actor && !mayAccess(actor, row))) throw webhookNotFound(input.id);
  return { id: row.id, version: row.version };
}

/** The webhook read (or locked) for the caller: one hidden from them is not_found, as one that never existed. */
export function visibleWebhook(row: WebhookRow | undefined, actor: Principal, id: string): WebhookRow {
  if (!row || !mayAccess(actor, row)) throw webhookNotFound(id);
  return row;
}

/**
 * `revealToRequester` of the operations that show a secret once: the webhook's current secret while
 * it is still at the version the approved call left it at (nothing rotated or changed it since), else the redacted output.
 */
export async function revealSecret<T extends { id: string; version: number; secret: string | null }>(db: Kysely<DB>, ctx: OperationContext, redacted: T): Promise<T> {
  const row = await findWebhook(db, redacted.id);
  if (!row || row.version !== redacted.version) return redacted;
  return { ...redacted, secret: webhookSecret(ctx.config.secretKey, row.secret_ref, row.id) };
}

function webhookNotFound(id: string): BatonError {
  return new BatonError('not_found', `No webhook ${id}.`, { hint: '[[webhooks_list]] lists the webhooks that exist.' });
}
