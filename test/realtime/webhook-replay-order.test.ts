import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask } from '../rest/fixtures.ts';
import { reachNextSeqDigit } from '../store/next-seq-digit.ts';
import { eventsSettled } from '../leases/instances.ts';

/** Webhook replay reads the timeline in commit order, its seqs compared as numbers (spec/realtime.md, "Replay"). */
let t: TestServer;
beforeAll(async () => {
  // No delivery worker: the replay's queue is what is checked.
  t = await startTestServer({ webhookAllowPrivate: true, webhookIntervalMs: 0 });
});
afterAll(() => t.close());

const newestEvent = async () => (await t.request('GET', '/api/v1/events?order=desc&limit=1')).json<{ data: { id: string }[] }>().data[0]?.id;

it('replays across a change in the length of seqs and says through the newest event it read', async () => {
  const hook = await t.request('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/replay', event_types: ['task.created'] } });
  expect(hook.status, hook.body).toBe(201);
  const since = await newestEvent();
  await createTask(t, { title: 'short seq' });
  await reachNextSeqDigit(t);
  await createTask(t, { title: 'long seq 1' });
  await createTask(t, { title: 'long seq 2' });
  // The replay reads settled events only: on the shared test PostgreSQL another test database's open
  // transaction can hold the newest back for a while (it had queued 1 of the 3).
  await eventsSettled(t);
  const newest = await newestEvent();
  const res = await t.request('POST', `/api/v1/webhooks/${hook.json<{ id: string }>().id}/replay?since=${since}`, { body: {} });
  expect(res.status, res.body).toBe(200);
  const replayed = res.json<{ queued: number; through: string; has_more: boolean }>();
  expect(replayed).toMatchObject({ queued: 3, has_more: false });
  // Through the newest event it read: the last created here, or a later one (on the shared test
  // PostgreSQL the list above can still hold back an event another test database's transaction
  // delays, which the replay then reads; event ids grow with time).
  expect(replayed.through >= (newest ?? '')).toBe(true);
});
