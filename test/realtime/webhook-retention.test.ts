import { afterAll, beforeAll, expect, it } from 'vitest';
import { engine } from '../harness.ts';
import { type Cluster, CRON_SECRET, eventsSettled, keepaliveEverywhere, pages, pollUntil, startInstances, type TestClock, testClock } from '../leases/instances.ts';
import { type Receiver, startReceiver } from './receiver.ts';

/**
 * The delivery log's retention (spec/realtime.md "The delivery log"): with
 * BATON_WEBHOOK_DELIVERY_RETENTION_DAYS set, the pruning pass deletes finished deliveries whose last
 * attempt is older than that, once across instances, and never a pending one, whatever its age.
 */

const DAY_MS = 86_400_000;
const RETENTION_DAYS = 7;

interface DeliveryBody {
  event_id: string;
  state: 'pending' | 'delivered' | 'failed';
}

let c: Cluster;
let clock: TestClock;
let receiver: Receiver;

beforeAll(async () => {
  clock = testClock();
  receiver = await startReceiver();
  // No background delivery or pruning: each pass runs through /cron/keepalive, on the test's clock.
  // Two attempts: at once, then an hour later; after the second failure a delivery is `failed`.
  c = await startInstances(engine === 'postgres' ? 2 : 1, { webhookIntervalMs: 0, webhookRetryScheduleMs: [0, 3_600_000], cronSecret: CRON_SECRET, webhookDeliveryRetentionDays: RETENTION_DAYS }, clock);
});
afterAll(async () => {
  await c.close();
  await receiver.close();
});

async function subscribe(path: string): Promise<string> {
  const res = await c.request('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}${path}`, event_types: ['task.created'] } });
  expect(res.status, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

async function createTask(title: string): Promise<void> {
  const res = await c.request('POST', '/api/v1/tasks', { body: { title } });
  expect(res.status, res.body).toBe(201);
}

/** One maintenance pass on every instance at once; answers the deliveries their pruning deleted. */
async function pruningPass(): Promise<number> {
  await eventsSettled(c);
  return keepaliveEverywhere(c, 'pruning', 'webhook_deliveries');
}

function deliveries(webhook: string): Promise<DeliveryBody[]> {
  return pages<DeliveryBody>(c, `/api/v1/webhooks/${webhook}/deliveries`);
}

it('deletes finished deliveries past the retention once, and keeps pending ones whatever their age', async () => {
  const ok = await subscribe('/ok');
  const down = await subscribe('/down');
  receiver.script('/down', [500, 500, 500, 500]);

  // Day 0: one event, delivered to /ok; /down refused it once, so its delivery is pending.
  await createTask('old');
  const [old] = await pollUntil(async () => {
    await pruningPass();
    const got = await deliveries(ok);
    return got.length === 1 && got[0]?.state === 'delivered' ? got : undefined;
  }, 15_000, "the first event's delivery");
  expect(await deliveries(down)).toMatchObject([{ event_id: old?.event_id, state: 'pending' }]);

  // Day 8: a new event. The pass prunes the delivered one of day 0, and only that one: the pending
  // one is older still but not finished (its second attempt then fails it, and disables /down).
  clock.advance((RETENTION_DAYS + 1) * DAY_MS);
  await createTask('new');
  expect(await pruningPass()).toBe(1);
  const fresh = await pollUntil(async () => {
    const got = await deliveries(ok);
    return got.length === 1 && got[0]?.state === 'delivered' ? got : (await pruningPass(), undefined);
  }, 15_000, "the second event's delivery");
  expect(fresh[0]?.event_id).not.toBe(old?.event_id);
  expect(await deliveries(down)).toContainEqual(expect.objectContaining({ event_id: old?.event_id, state: 'failed' }));

  // Day 16: both finished ones of day 8 go (the delivered one and the failed one); what /down still
  // has pending (the new event, waiting while it is disabled) stays.
  clock.advance((RETENTION_DAYS + 1) * DAY_MS);
  expect(await pruningPass()).toBe(2);
  expect(await deliveries(ok)).toEqual([]);
  const left = await deliveries(down);
  expect(left.every((d) => d.state === 'pending')).toBe(true);
  expect(left.map((d) => d.event_id)).not.toContain(old?.event_id);
  expect(await pruningPass()).toBe(0);
});
