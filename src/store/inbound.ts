import type { InboundDeliveriesTable } from './schema.ts';
import type { Tx } from './connection.ts';

export type InboundProvider = InboundDeliveriesTable['provider'];

export interface NewDelivery {
  provider: InboundProvider;
  provider_event_id: string;
  provider_type: string;
  event_id: string;
  received_at: Date;
}

/**
 * Records a provider delivery unless its event id was seen before. Returns the Baton event id of
 * the FIRST delivery and whether this one is that first one. A concurrent duplicate waits on the
 * primary key until the first commits, then sees it.
 */
export async function recordDelivery(tx: Tx, row: NewDelivery): Promise<{ first: boolean; eventId: string }> {
  const inserted = await tx.insertInto('inbound_deliveries').values(row).onConflict((oc) => oc.doNothing()).returning('event_id').executeTakeFirst();
  if (inserted) return { first: true, eventId: inserted.event_id };
  const existing = await tx
    .selectFrom('inbound_deliveries')
    .select('event_id')
    .where('provider', '=', row.provider)
    .where('provider_event_id', '=', row.provider_event_id)
    .executeTakeFirstOrThrow();
  return { first: false, eventId: existing.event_id };
}
