import { afterAll, beforeAll, expect, it } from 'vitest';
import { systemClock } from '../../src/clock.ts';
import { createIds } from '../../src/ids.ts';
import type { Database } from '../../src/store/database.ts';
import { deliverWebhooks } from '../../src/workers/deliver-webhooks.ts';
import { freshDatabase, testConfig } from '../harness.ts';

let database: Database;
let sent: string[] = [];

beforeAll(async () => {
  ({ database } = await freshDatabase((text) => sent.push(text)));
});
afterAll(() => database.close());

// Every burst of writes wakes the delivery pass on every instance; with no webhook it used to open a
// transaction, lock the (no) live webhooks, commit and look for due deliveries: four statements per wake-up.
it('a delivery pass with no live webhook sends one statement and attempts nothing', async () => {
  sent = [];
  const report = await deliverWebhooks(database.db, { clock: systemClock, ids: createIds(), config: testConfig() });
  expect(report).toEqual({ attempted: 0, delivered: 0, failed: 0 });
  expect(sent).toHaveLength(1);
  expect(sent[0]).toMatch(/FROM webhooks WHERE enabled AND deleted_at IS NULL/);
});
