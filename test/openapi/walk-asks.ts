import { linkKey, newLinkId, signLink } from '../../src/notification-link.ts';
import { readCursorKey } from '../../src/store/server-keys.ts';
import { UNKNOWN, type Walker } from './walk.ts';

/** Asks, the inbox, wait and notifications: successes, refusals, validation failures and a closed ask. */
export async function walkAsks(w: Walker): Promise<void> {
  const { call, who } = w;
  const agent = who.agent.token;
  const task = (await call('POST', '/api/v1/tasks', { body: { title: 'Asked about' } }, 201)).json<{ id: string }>();
  const body = { question: 'Which region?', options: [{ label: 'eu', value: 'eu-west-1' }, { label: 'us' }], to: who.reviewer.id, timeout_s: 600, default: { option: 'eu' } };
  const ask = (await call('POST', `/api/v1/tasks/${task.id}/asks`, { body, token: agent }, 201)).json<{ id: string }>();
  await call('POST', `/api/v1/tasks/${task.id}/asks`, { body: { ...body, due_at: '2020-01-01T00:00:00Z' }, token: agent }, 400);
  await call('POST', `/api/v1/tasks/${UNKNOWN.task}/asks`, { body, token: agent }, 404);
  await call('GET', `/api/v1/asks?task_id=${task.id}&status=open`, {}, 200);
  await call('GET', `/api/v1/asks/${ask.id}`, { token: agent }, 200);
  await call('GET', '/api/v1/asks/ask_01ARZ3NDEKTSV4RRFFQ69G5FAV', {}, 404);
  await call('POST', `/api/v1/asks/${ask.id}/answer`, { body: { option: 'us' }, token: agent }, 403);
  await call('POST', `/api/v1/asks/${ask.id}/answer`, { body: { option: 'us' }, token: who.reviewer.token }, 200);
  await call('POST', `/api/v1/asks/${ask.id}/answer`, { body: { option: 'eu' }, token: who.reviewer.token }, 409);
  const other = (await call('POST', `/api/v1/tasks/${task.id}/asks`, { body: { ...body, options: [], default: { text: 'skip' } }, token: agent }, 201)).json<{ id: string }>();
  await call('POST', `/api/v1/asks/${other.id}/cancel`, { body: {}, token: agent }, 200);
  const inbox = (await call('GET', '/api/v1/inbox?state=unread', { token: who.reviewer.token }, 200)).json<{ data: { id: string }[] }>();
  await call('GET', '/api/v1/inbox?state=nope', { token: who.reviewer.token }, 400);
  await call('POST', '/api/v1/inbox/mark', { body: { ids: inbox.data.map((i) => i.id).slice(0, 5), state: 'done' }, token: who.reviewer.token }, 200);
  await call('GET', '/api/v1/wait?timeout_s=0', { token: agent }, 200);
  await call('GET', '/api/v1/wait?timeout_s=61', { token: agent }, 400);
  // Notifications: preferences, the outbox, and a link that is not one.
  await call('GET', '/api/v1/preferences/notifications', {}, 200);
  await call('PATCH', '/api/v1/preferences/notifications', { body: { email: 'digest', chat: false } }, 200);
  await call('PATCH', '/api/v1/preferences/notifications', { body: { email: 'weekly' } }, 400);
  await call('GET', '/api/v1/preferences/notifications', { token: agent }, 403);
  await call('GET', '/api/v1/notifications?channel=email', {}, 200);
  await call('POST', '/api/v1/links/redeem', { body: { token: 'not.a-link' } }, 404);
  // A link as a notification carries it (the worker signs them; test/asks/notifications.test.ts sends real ones).
  const me = (await call('GET', '/api/v1/whoami', {}, 200)).json<{ principal: { id: string } }>().principal.id;
  const link = signLink(linkKey(await readCursorKey(w.t.database.db)), { id: newLinkId(), to: me, task: task.id, item: inbox.data[0]?.id ?? 'inb_x', exp: Math.floor(Date.now() / 1000) + 600 });
  await call('POST', '/api/v1/links/redeem', { body: { token: link } }, 200);
  await call('POST', '/api/v1/links/redeem', { body: { token: link } }, 409);
}
