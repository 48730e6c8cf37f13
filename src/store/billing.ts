import type { Selectable } from 'kysely';
import { sql } from 'kysely';
import type { BillingAccountsTable } from './schema.ts';
import type { Tx } from './connection.ts';

export type BillingAccountRow = Selectable<BillingAccountsTable>;

export type BillingChanges = Partial<
  Pick<BillingAccountRow, 'email' | 'checkout_session_id' | 'subscription_id' | 'subscription_status' | 'price_id' | 'last_invoice_id' | 'last_invoice_status'>
>;

/** Creates the customer's billing record or applies changes to it (bumping its version); by the system actor. */
export async function upsertBillingAccount(tx: Tx, customerId: string, changes: BillingChanges, now: Date): Promise<BillingAccountRow> {
  const by = { updated_at: now, updated_by_id: 'system', updated_by_kind: 'system' };
  return tx
    .insertInto('billing_accounts')
    .values({ customer_id: customerId, ...changes, ...by, created_at: now, created_by_id: 'system', created_by_kind: 'system' })
    .onConflict((oc) => oc.column('customer_id').doUpdateSet({ ...changes, ...by, version: sql<number>`billing_accounts.version + 1` }))
    .returningAll()
    .executeTakeFirstOrThrow();
}
