import type { Response, TestServer } from '../harness.ts';

/** Posts a provider's body exactly as given, with the provider's headers and no Baton token. */
export function postRaw(t: TestServer, url: string, body: string, headers: Record<string, string>): Promise<Response> {
  return t.request('POST', url, { payload: body, headers, token: null, key: null });
}

/** What inbound handling writes: accepted deliveries and events by the system actor. */
export async function inboundCounts(t: TestServer): Promise<{ deliveries: number; systemEvents: number }> {
  const deliveries = await t.database.db.selectFrom('inbound_deliveries').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  const events = await t.database.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('actor_kind', '=', 'system')
    .executeTakeFirstOrThrow();
  return { deliveries: Number(deliveries.n), systemEvents: Number(events.n) };
}

/** The events recorded for one provider event id. */
export async function eventsForProviderEvent(t: TestServer, providerEventId: string) {
  const rows = await t.database.db.selectFrom('events').selectAll().orderBy('seq', 'asc').execute();
  return rows.filter((e) => (e.data as { provider_event_id?: string }).provider_event_id === providerEventId);
}
