import { useEffect, useRef, useState } from 'preact/hooks';
import { call } from './api.ts';
import { can, useEvents, useSession } from './session.ts';
import type { OutputOf } from '../../src/client/index.ts';
import type { BatonEvent } from './types.ts';

/** What GET /inbox answers (spec/asks.md#the-inbox): a page of the caller's items, with counts. */
export type InboxPage = OutputOf<'inbox_list'>;
export type InboxItem = InboxPage['data'][number];

/** The window event the app raises after it marks inbox items, so the header's count follows at once (marks emit no stream event). */
export const INBOX_CHANGED = 'baton:inbox-changed';
const NOTIFY_KEY = 'baton.inbox.notify';

/** Events that may add or close an inbox item of the signed-in person (spec/asks.md: the table of kinds). */
export function touchesInbox(event: BatonEvent): boolean {
  return event.type.startsWith('ask.') || event.type.startsWith('approval.') || ['comment.mentioned', 'task.assigned', 'task.changes_requested', 'task.status_changed'].includes(event.type);
}

/** Whether the person asked for browser notifications of new inbox items (this browser only). */
export function notifyWanted(): boolean {
  return localStorage.getItem(NOTIFY_KEY) === 'on';
}

export function setNotifyWanted(on: boolean): void {
  if (on) localStorage.setItem(NOTIFY_KEY, 'on');
  else localStorage.removeItem(NOTIFY_KEY);
}

/**
 * The number of unread inbox items, kept current from the stream and the app's own marks; when it
 * grows and the person turned notifications on (and the browser allows them), a notification with
 * the newest item.
 */
export function useInboxUnread(): number | null {
  const session = useSession();
  const [unread, setUnread] = useState<number | null>(null);
  const last = useRef<number | null>(null);
  const allowed = can(session, 'inbox_list');
  const refresh = () => {
    if (!allowed) return;
    void call('inbox_list', { state: ['unread'], limit: 1 }).then((page) => {
      const before = last.current;
      last.current = page.counts.unread;
      setUnread(page.counts.unread);
      const newest = page.data[0];
      if (before !== null && page.counts.unread > before && newest && notifyWanted() && typeof Notification !== 'undefined' && Notification.permission === 'granted') {
        new Notification(`Baton: ${page.counts.unread} unread in your inbox`, { body: newest.excerpt, tag: 'baton-inbox' });
      }
    }, () => undefined);
  };
  useEffect(() => {
    refresh();
    addEventListener(INBOX_CHANGED, refresh);
    return () => removeEventListener(INBOX_CHANGED, refresh);
  }, []);
  useEvents((event) => {
    if (touchesInbox(event)) refresh();
  });
  return unread;
}
