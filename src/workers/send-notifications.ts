import type { Kysely } from 'kysely';
import { createTransport, type Transporter } from 'nodemailer';
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import { toBatonError } from '../errors.ts';
import { linkKey, newLinkId, signLink } from '../notification-link.ts';
import { claimDueNotifications, type NotificationRow, type NotificationSubject, notificationSubjects, recordNotificationAttempt } from '../store/notifications.ts';
import type { DB, WebhookAttempt } from '../store/schema.ts';
import { readCursorKey } from '../store/server-keys.ts';
import { postTo, resolveDestination } from '../webhook-destination.ts';
import { chatFormat, chatMessage, digestEmail, type Email, itemEmail, type LinkMaker } from './notification-messages.ts';

/** An SMTP server or chat receiver gets 15 s per step, as a webhook receiver does (DESIGN §6). */
const TIMEOUT_MS = 15_000;
/** A claimed notification comes back to the queue this long after its claim if its instance died mid-attempt. */
const CLAIM_MS = 4 * TIMEOUT_MS;
const NOTIFICATIONS_PER_PASS = 20;

export interface NotifyDeps {
  readonly clock: Clock;
  readonly config: Config;
  /** A failed send is logged, so an operator sees an SMTP server or chat channel that refuses before anyone misses mail. */
  readonly log: { warn(details: object, message: string): void; error(details: object, message: string): void };
}

export interface NotifyReport {
  attempted: number;
  sent: number;
  failed: number;
  skipped: number;
}

/** What one message is: one email or chat message, sent for one or more outbox rows (a digest). */
interface Message {
  readonly rows: readonly NotificationRow[];
  readonly send: () => Promise<{ status: number | null }>;
}

/**
 * ONE notification pass, safe on any number of instances at once (SKIP LOCKED): takes due outbox
 * rows, sends each immediate email and chat message, and one digest email per person whose digest
 * came due, with links signed for the person. Success is `sent`; a failure is retried on
 * `webhookRetryScheduleMs` (±10 % jitter), then `failed`; a channel the server has no URL for is
 * `skipped`. Every attempt is recorded on its rows.
 */
export async function sendNotifications(db: Kysely<DB>, deps: NotifyDeps): Promise<NotifyReport> {
  const report: NotifyReport = { attempted: 0, sent: 0, failed: 0, skipped: 0 };
  const now = deps.clock.now();
  const notify = deps.config.notify;
  const claimed = await claimDueNotifications(db, { now, digestBefore: new Date(now.getTime() - notify.digestS * 1000), claimUntil: new Date(now.getTime() + CLAIM_MS), limit: NOTIFICATIONS_PER_PASS });
  if (claimed.length === 0) return report;
  const key = linkKey(await readCursorKey(db));
  const exp = Math.floor(now.getTime() / 1000) + notify.linkTtlS;
  const link: LinkMaker = (claims) => `${deps.config.publicUrl}/tasks/${claims.task}?link=${signLink(key, { ...claims, id: newLinkId(), exp })}`;
  const subjects = new Map((await notificationSubjects(db, [...new Set(claimed.map((n) => n.inbox_item_id))])).map((s) => [s.id, s]));
  const gone = claimed.filter((n) => !subjects.has(n.inbox_item_id));
  await recordNotificationAttempt(db, gone, { state: 'skipped', attempt: failure(now, 'its inbox item or task is gone'), nextAttemptAt: now, now });
  report.skipped += gone.length;
  const live = claimed.filter((n) => subjects.has(n.inbox_item_id));
  const unconfigured = live.filter((n) => (n.channel === 'email' ? !notify.smtpUrl : !chatUrl(subjects.get(n.inbox_item_id), deps.config)));
  await recordNotificationAttempt(db, unconfigured, { state: 'skipped', attempt: failure(now, 'no BATON_SMTP_URL, or no chat webhook for the workspace or BATON_CHAT_WEBHOOK_URL, for this channel'), nextAttemptAt: now, now });
  report.skipped += unconfigured.length;
  const transport = notify.smtpUrl ? createTransport({ url: notify.smtpUrl, connectionTimeout: TIMEOUT_MS, greetingTimeout: TIMEOUT_MS, socketTimeout: TIMEOUT_MS }) : undefined;
  try {
    const messages = compose(
      live.filter((n) => !unconfigured.includes(n)),
      (id) => subjects.get(id) as NotificationSubject,
      { link, config: deps.config, ...(transport ? { transport } : {}) },
    );
    const outcomes = await Promise.all(messages.map((m) => attempt(m, deps.clock)));
    for (const [i, m] of messages.entries()) {
      const result = outcomes[i];
      if (!result) continue;
      const state = await settle(db, deps, m.rows, result);
      report.attempted += m.rows.length;
      if (state === 'sent') report.sent += m.rows.length;
      if (state === 'failed') report.failed += m.rows.length;
    }
  } finally {
    transport?.close();
  }
  return report;
}

/** An email per immediate row, a digest email per person, a chat message per chat row. */
function compose(rows: readonly NotificationRow[], subject: (inboxItemId: string) => NotificationSubject, out: { link: LinkMaker; config: Config; transport?: Transporter }): Message[] {
  const messages: Message[] = [];
  const digests = new Map<string, NotificationRow[]>();
  // Every email says where the person chooses what they get (the web app's page of their own, spec/notifications.md).
  const preferences = `${out.config.publicUrl}/sessions#notifications`;
  const mail = (to: string, email: Email) => async () => {
    if (!out.transport) throw new Error('no SMTP transport');
    const text = `${email.text}\n\n--\nChoose what Baton emails you (at once, a digest, or nothing): ${preferences}`;
    await out.transport.sendMail({ from: out.config.notify.smtpFrom, to, subject: email.subject, text, headers: { 'List-Unsubscribe': `<${preferences}>` } });
    return { status: 250 };
  };
  for (const row of rows) {
    const s = subject(row.inbox_item_id);
    if (row.channel === 'chat') {
      const url = chatUrl(s, out.config) ?? '';
      const body = JSON.stringify(chatMessage(s, row.principal_id, out.link, chatFormat(url)));
      messages.push({ rows: [row], send: () => postChat(url, out.config, body) });
    } else if (row.digest) {
      digests.set(row.principal_id, [...(digests.get(row.principal_id) ?? []), row]);
    } else {
      messages.push({ rows: [row], send: mail(s.email ?? '', itemEmail(s, row.principal_id, out.link)) });
    }
  }
  for (const [principalId, group] of digests) {
    const items = group.map((r) => subject(r.inbox_item_id));
    messages.push({ rows: group, send: mail(items[0]?.email ?? '', digestEmail(items, principalId, out.link)) });
  }
  return messages;
}

/** Where an item's chat message goes: its workspace's channel, else the server's. */
function chatUrl(subject: NotificationSubject | undefined, config: Config): string | undefined {
  return subject?.chat_webhook_url ?? config.notify.chatWebhookUrl;
}

async function postChat(url: string, config: Config, body: string): Promise<{ status: number }> {
  const destination = await resolveDestination(url, config.webhookAllowPrivate);
  const status = await postTo(destination, body, {}, TIMEOUT_MS);
  if (status < 200 || status >= 300) throw Object.assign(new Error(`HTTP ${status}`), { status });
  return { status };
}

async function attempt(m: Message, clock: Clock): Promise<{ ok: boolean; attempt: WebhookAttempt }> {
  const started = clock.now();
  try {
    const { status } = await m.send();
    return { ok: true, attempt: { at: started.toISOString(), status, duration_ms: clock.now().getTime() - started.getTime(), error: null } };
  } catch (cause) {
    // nodemailer's errors carry the SMTP reply code; a chat failure its HTTP status.
    const code = (cause as { responseCode?: unknown; status?: unknown }).responseCode ?? (cause as { status?: unknown }).status;
    const failure = toBatonError(cause);
    const error = failure.code === 'internal' ? (cause instanceof Error ? cause.message : String(cause)) : failure.detail;
    return { ok: false, attempt: { at: started.toISOString(), status: typeof code === 'number' ? code : null, duration_ms: clock.now().getTime() - started.getTime(), error: error.slice(0, 500) } };
  }
}

async function settle(db: Kysely<DB>, deps: NotifyDeps, rows: readonly NotificationRow[], result: { ok: boolean; attempt: WebhookAttempt }): Promise<'sent' | 'pending' | 'failed'> {
  const made = Math.max(...rows.map((r) => r.attempt_count)) + 1;
  const delay = deps.config.webhookRetryScheduleMs[made];
  const now = deps.clock.now();
  const state = result.ok ? 'sent' : delay === undefined ? 'failed' : 'pending';
  const next = new Date(now.getTime() + (delay ?? 0) * (0.9 + Math.random() * 0.2));
  await recordNotificationAttempt(db, rows, { state, attempt: result.attempt, nextAttemptAt: next, now });
  if (!result.ok) {
    const details = { channel: rows[0]?.channel, principal_id: rows[0]?.principal_id, notifications: rows.length, attempts: made, status: result.attempt.status, error: result.attempt.error };
    if (state === 'failed') deps.log.error(details, 'notification failed: no attempts left');
    else deps.log.warn({ ...details, next_attempt_at: next.toISOString() }, 'notification not sent; will retry');
  }
  return state;
}

function failure(now: Date, error: string): WebhookAttempt {
  return { at: now.toISOString(), status: null, duration_ms: 0, error };
}
