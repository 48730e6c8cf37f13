import { UNKNOWN, type Walker } from './walk.ts';

const WEBHOOK = 'whk_01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The webhook operations: create (and its approval gate), read, list, update, deliveries, replay, secret rotation, delete. */
export async function walkWebhooks(w: Walker): Promise<void> {
  const { call, present, who } = w;
  // Disabled: the walk checks responses, not deliveries.
  const made = (await call('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/walk', event_types: ['task.created'], enabled: false } }, 201)).json<{
    id: string;
    version: number;
  }>();
  await call('POST', '/api/v1/webhooks', { body: { url: 'ftp://example.com/walk' } }, 422);
  await call('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/walk', event_types: ['no.such'] } }, 400);
  await call('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/walk' }, token: who.agent.token }, 403);
  await call('GET', '/api/v1/webhooks?limit=1', {}, 200);
  await call('GET', `/api/v1/webhooks/${made.id}`, {}, 200);
  await call('GET', `/api/v1/webhooks/${WEBHOOK}`, {}, 404);
  await call('PATCH', `/api/v1/webhooks/${made.id}`, { body: { event_types: null }, ifMatch: `"${made.version}"` }, 200);
  await call('PATCH', `/api/v1/webhooks/${made.id}`, { body: { enabled: true }, ifMatch: `"${made.version}"` }, 409);
  await call('GET', `/api/v1/webhooks/${made.id}/deliveries`, {}, 200);
  const events = (await call('GET', '/api/v1/events?order=desc&limit=1', {}, 200)).json<{ data: { id: string }[] }>();
  const since = present(events.data[0]?.id, 'an event id');
  await call('POST', `/api/v1/webhooks/${made.id}/replay?since=${since}`, { body: {} }, 200);
  await call('POST', `/api/v1/webhooks/${made.id}/replay?since=${UNKNOWN.event}`, { body: {} }, 400);
  await call('POST', `/api/v1/webhooks/${made.id}/rotate-secret`, { body: {} }, 200);
  await call('POST', `/api/v1/webhooks/${WEBHOOK}/rotate-secret`, { body: {} }, 404);
  await call('DELETE', `/api/v1/webhooks/${made.id}`, {}, 200);
  await call('GET', `/api/v1/webhooks/${made.id}`, {}, 404);
}
