import { SpanStatusCode } from '@opentelemetry/api';
import type { Kysely } from 'kysely';
import type { Tx } from '../store/connection.ts';
import { inWorkspace } from '../store/workspace-scope.ts';
import { Webhook } from 'standardwebhooks';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { SYSTEM_ACTOR } from '../domain/scopes.ts';
import { toBatonError } from '../errors.ts';
import type { Ids } from '../ids.ts';
import { shapeEvent } from '../operations/events/event-schema.ts';
import { appendEvents, type EventRow, eventsHeldBack } from '../store/events.ts';
import type { DB, WebhookAttempt } from '../store/schema.ts';
import { advanceCursors, type AttemptOutcome, claimDue, disableWebhook, type DueDelivery, eventsAfter, liveWebhookWorkspaces, lockLiveWebhooks, type NewDelivery, queueDeliveries, recordAttempts, type WebhookRow } from '../store/webhooks.ts';
import { postTo, resolveDestination } from '../webhook-destination.ts';
import { webhookSecret } from '../webhook-secret.ts';
import type { RunningTail } from '../service/event-tail.ts';
import { type Tracing, tracingOff } from '../tracing.ts';
import { type Loop, startLoop } from './loop.ts';

/** How long a wake-up waits for more appends to join it: delivery latency traded for one pass per burst. */
const WAKE_COALESCE_MS = 50;
/** First look-again after a pass found events held back from cursors; it doubles up to the interval. */
const HELD_BACK_RETRY_MS = 100;
/** DESIGN §6: a receiver gets 15 s to answer. */
const TIMEOUT_MS = 15_000;
/** A claimed delivery comes back to the queue this long after its claim if its instance died mid-attempt. */
const CLAIM_MS = 2 * TIMEOUT_MS;
const WEBHOOKS_PER_PASS = 50;
const EVENTS_PER_WEBHOOK = 500;
/** Attempts in flight at once; a pass that claimed this many runs again at once, as more may be due. */
const DELIVERIES_PER_PASS = 50;

export interface DeliveryReport {
  attempted: number;
  delivered: number;
  failed: number;
}

export interface DeliveryDeps {
  readonly clock: Clock;
  readonly ids: Ids;
  readonly config: Config;
  /** Each attempt is a client span whose `traceparent` the request carries (none when off or omitted). */
  readonly tracing?: Tracing;
}

/**
 * ONE delivery pass, safe on any number of instances at once (SKIP LOCKED): queues a delivery per
 * new matching event for each enabled webhook, then makes one attempt at each due delivery (up to
 * 50, in parallel), signed per Standard Webhooks, and records them in one transaction. A 2xx
 * delivers; anything else is retried on `webhookRetryScheduleMs` (with ±10 % jitter), then
 * `failed`; a failed delivery or a 410 disables the webhook with a `webhook.disabled` event. Every
 * attempt is recorded.
 */
export async function deliverWebhooks(db: Kysely<DB>, deps: DeliveryDeps): Promise<DeliveryReport> {
  return (await deliveryPass(db, deps)).report;
}

/** Events that may make a webhook live: the instance that committed one runs a delivery pass at once. */
const LIVENESS_EVENTS = new Set(['webhook.created', 'webhook.updated']);

export interface WebhookDelivery extends Loop {
  /** Told of each write this instance committed: a webhook made live here starts its deliveries at once. */
  committed(events: readonly { type: string }[]): void;
}

/**
 * The delivery loop of one instance: a pass at start, every `webhookIntervalMs` (retries, lost
 * wake-ups, and webhooks made live on other instances), at once when a webhook is made live
 * through this instance, and (coalesced) on every append anywhere while a live webhook exists.
 * Appends are LISTENed to only while the last pass found a live webhook: PostgreSQL wakes every
 * LISTENing connection of the database on every write, so an instance with nothing to deliver
 * LISTENs to nothing.
 */
export function startWebhookDelivery(db: Kysely<DB>, tail: RunningTail, deps: DeliveryDeps & { onError: (error: unknown) => void }): WebhookDelivery {
  let wakeQueued = false;
  const wake = () => {
    if (wakeQueued) return;
    wakeQueued = true;
    setTimeout(() => {
      wakeQueued = false;
      delivery.wake();
    }, WAKE_COALESCE_MS).unref();
  };
  const wantAppends = tail.onAppend(wake);
  // An append's wake-up can find its event held back from cursors by an older transaction open
  // somewhere on the server (src/store/events.ts, SETTLED); that transaction's end wakes nobody,
  // so look again soon, backing off, rather than at the next interval.
  let heldBackRetryMs = 0;
  const delivery = startLoop(
    deps.config.webhookIntervalMs,
    async () => {
      const { live, full } = await deliveryPass(db, deps);
      wantAppends(live);
      // A full batch may have left due deliveries behind: take them now, not at the next interval.
      if (full) delivery.wake();
      if (live && (await eventsHeldBack(db))) {
        heldBackRetryMs = Math.min(deps.config.webhookIntervalMs, heldBackRetryMs === 0 ? HELD_BACK_RETRY_MS : heldBackRetryMs * 2);
        setTimeout(() => delivery.wake(), heldBackRetryMs).unref();
      } else {
        heldBackRetryMs = 0;
      }
    },
    deps.onError,
  );
  delivery.wake();
  return {
    wake: () => delivery.wake(),
    committed(events) {
      if (events.some((e) => LIVENESS_EVENTS.has(e.type))) delivery.wake();
    },
    async stop() {
      await delivery.stop();
      wantAppends(false);
    },
  };
}

async function deliveryPass(db: Kysely<DB>, deps: DeliveryDeps): Promise<{ live: boolean; full: boolean; report: DeliveryReport }> {
  // Every burst of writes wakes this pass; a workspace with no live webhook has nothing to fan out or
  // attempt (a delivery is only attempted for a live webhook), and one statement names those that do.
  const workspaces = await liveWebhookWorkspaces(db);
  if (workspaces.length === 0) return { live: false, full: false, report: { attempted: 0, delivered: 0, failed: 0 } };
  const report: DeliveryReport = { attempted: 0, delivered: 0, failed: 0 };
  let full = false;
  // A webhook hears its own workspace's events only: each workspace's webhooks are fanned out and settled bound to it.
  for (const workspace of workspaces) {
    const done = await deliveryPassIn(db, workspace, deps);
    report.attempted += done.attempted;
    report.delivered += done.delivered;
    report.failed += done.failed;
    full ||= done.attempted === DELIVERIES_PER_PASS;
  }
  return { live: true, full, report };
}

/**
 * A workspace's pass in two transactions, whatever the number of webhooks and deliveries: the fan-out
 * and the claim of due deliveries together, then, after the attempts, their records together.
 */
async function deliveryPassIn(db: Kysely<DB>, workspace: string, deps: DeliveryDeps): Promise<DeliveryReport> {
  const due = await inWorkspace(db, workspace, async (tx) => {
    const read = await fanOut(tx, deps);
    const now = deps.clock.now();
    return claimDue(tx, now, new Date(now.getTime() + CLAIM_MS), DELIVERIES_PER_PASS, read);
  });
  const attempted = await Promise.all(due.map(async (d) => ({ d, result: await attempt(d, deps) })));
  const report: DeliveryReport = { attempted: due.length, delivered: 0, failed: 0 };
  if (due.length === 0) return report;
  await inWorkspace(db, workspace, async (tx) => {
    const now = deps.clock.now();
    const settled = attempted.map(({ d, result }) => ({ d, result, outcome: settlement(deps, d, result, now) }));
    await recordAttempts(tx, settled.map((s) => s.outcome), now);
    for (const { d, result, outcome } of settled) {
      if (outcome.state === 'delivered') report.delivered++;
      if (outcome.state !== 'failed') continue;
      report.failed++;
      await disable(tx, deps, d, result, now);
    }
  });
  return report;
}

/**
 * Queues a delivery of each new matching event for every live webhook this instance could lock, and
 * moves their cursors past what was read. Webhooks at the same cursor (all of them, once caught up)
 * share one read of the timeline; the deliveries are one insert and the cursors one update.
 * Answers the webhooks and events read, so the claim that follows need not read them again.
 */
async function fanOut(tx: Tx, deps: DeliveryDeps): Promise<{ webhooks: WebhookRow[]; events: EventRow[] }> {
  const now = deps.clock.now();
  const webhooks = await lockLiveWebhooks(tx, WEBHOOKS_PER_PASS);
  const read: EventRow[] = [];
  const queued: NewDelivery[] = [];
  const moves: { id: string; seq: string }[] = [];
  for (const [cursor, atCursor] of Map.groupBy(webhooks, (w) => w.cursor_seq)) {
    const events = await eventsAfter(tx, cursor, null, EVENTS_PER_WEBHOOK);
    const last = events.at(-1);
    if (!last) continue;
    read.push(...events);
    for (const webhook of atCursor) {
      for (const e of events) {
        if (!webhook.event_types || webhook.event_types.includes(e.type)) queued.push({ id: deps.ids.make('dlv'), webhook_id: webhook.id, event_id: e.id, event_seq: e.seq, now });
      }
      moves.push({ id: webhook.id, seq: last.seq });
    }
  }
  await queueDeliveries(tx, queued, false);
  await advanceCursors(tx, moves);
  return { webhooks, events: read };
}

interface AttemptResult {
  readonly attempt: WebhookAttempt;
  readonly ok: boolean;
  readonly gone: boolean;
}

/**
 * One attempt, as a client span (a new trace: the write that made the event is long committed)
 * whose W3C `traceparent` goes out with the request, so the receiver's work joins the trace.
 */
function attempt(d: DueDelivery, deps: DeliveryDeps): Promise<AttemptResult> {
  const tracing = deps.tracing ?? tracingOff;
  if (!tracing.enabled) return post(d, deps, tracing);
  // The host only: a webhook URL's path or query may hold the receiver's secret.
  const attributes = { 'http.request.method': 'POST', 'server.address': new URL(d.webhook.url).hostname, 'baton.webhook.id': d.webhook.id, 'baton.delivery.id': d.delivery.id, 'baton.event.id': d.event.id, 'baton.event.type': d.event.type };
  return tracing.inSpan('webhook deliver', 'client', attributes, async (span) => {
    const result = await post(d, deps, tracing);
    if (result.attempt.status !== null) span?.setAttribute('http.response.status_code', result.attempt.status);
    if (!result.ok) span?.setStatus({ code: SpanStatusCode.ERROR, message: result.attempt.error ?? 'failed' });
    return result;
  });
}

async function post(d: DueDelivery, deps: DeliveryDeps, tracing: Tracing): Promise<AttemptResult> {
  const started = deps.clock.now();
  const body = JSON.stringify(shapeEvent(d.event, { view: 'compact' }));
  let status: number | null = null;
  let error: string | null = null;
  try {
    const secret = webhookSecret(deps.config.secretKey, d.webhook.secret_ref, d.webhook.id);
    const destination = await resolveDestination(d.webhook.url, deps.config.webhookAllowPrivate);
    const signature = new Webhook(secret).sign(d.event.id, started, body);
    const headers: Record<string, string> = { 'webhook-id': d.event.id, 'webhook-timestamp': String(Math.floor(started.getTime() / 1000)), 'webhook-signature': signature };
    tracing.inject(headers);
    status = await postTo(destination, body, headers, TIMEOUT_MS);
    if (status < 200 || status >= 300) error = `HTTP ${status}`;
  } catch (cause) {
    const failure = toBatonError(cause);
    error = failure.code === 'internal' ? (cause instanceof Error ? cause.message : String(cause)) : failure.detail;
  }
  const duration = deps.clock.now().getTime() - started.getTime();
  return { attempt: { at: started.toISOString(), status, duration_ms: duration, error }, ok: error === null, gone: status === 410 };
}

/**
 * What an attempt makes of its delivery: a 2xx delivers; anything else is due again on the retry
 * schedule (±10 % jitter), or fails once the schedule is spent or the receiver answered 410.
 */
function settlement(deps: DeliveryDeps, d: DueDelivery, result: AttemptResult, now: Date): AttemptOutcome {
  const delay = deps.config.webhookRetryScheduleMs[d.delivery.attempt_count + 1];
  const state = result.ok ? 'delivered' : result.gone || delay === undefined ? 'failed' : 'pending';
  const nextAttemptAt = new Date(now.getTime() + (delay ?? 0) * (0.9 + Math.random() * 0.2));
  return { id: d.delivery.id, state, attempt: result.attempt, nextAttemptAt };
}

/**
 * A failed delivery turns its webhook off, with a `webhook.disabled` event, unless it is off already:
 * another of its deliveries failed first (in this pass or on another instance), or a person turned it off.
 */
async function disable(tx: Tx, deps: DeliveryDeps, d: DueDelivery, result: AttemptResult, now: Date): Promise<void> {
  const reason = result.gone ? 'receiver answered 410 Gone' : `delivery ${d.delivery.id} failed after ${d.delivery.attempt_count + 1} attempts`;
  const turnedOff = await disableWebhook(tx, d.webhook.id, { disabled_reason: reason, updated_at: now, updated_by_id: SYSTEM_ACTOR.id, updated_by_kind: SYSTEM_ACTOR.kind });
  if (turnedOff) await disabled(tx, deps, d, reason, now);
}

/** The `webhook.disabled` event of a webhook its failed delivery turned off. */
async function disabled(tx: Tx, deps: DeliveryDeps, d: DueDelivery, reason: string, now: Date): Promise<void> {
  await appendEvents(tx, [
    {
      id: deps.ids.make('evt'),
      type: 'webhook.disabled',
      subject: d.webhook.id,
      actor_id: SYSTEM_ACTOR.id,
      actor_kind: SYSTEM_ACTOR.kind,
      token_id: null,
      machine: null,
      idempotency_key: null,
      data: { reason, delivery_id: d.delivery.id, event_id: d.event.id },
      created_at: now,
    },
  ]);
}
