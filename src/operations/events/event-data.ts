import type { EventRow } from '../../store/events.ts';
import { urlOrigin } from '../shared/secret-url.ts';

/**
 * An event's `data` as the log's readers get it (lists, streams, waits, webhook deliveries). A
 * webhook's URL is a secret (whoever holds a chat channel's can post to it) that webhooks_get
 * answers only to those who manage that webhook, while any `events:read` holder reads the log: its
 * events carry the URL's origin only, stored ones too. The admins' export keeps it whole, for audit.
 */
export function eventData(row: Pick<EventRow, 'type' | 'data'>): Record<string, unknown> {
  const data = row.data as Record<string, unknown>;
  if (!row.type.startsWith('webhook.')) return data;
  const shown = { ...data };
  if (typeof data['url'] === 'string') shown['url'] = urlOrigin(data['url']);
  const changes = data['changes'] as Record<string, { from?: unknown; to?: unknown }> | undefined;
  const url = changes?.['url'];
  if (url) shown['changes'] = { ...changes, url: { from: originOf(url.from), to: originOf(url.to) } };
  return shown;
}

function originOf(value: unknown): unknown {
  return typeof value === 'string' ? urlOrigin(value) : value;
}
