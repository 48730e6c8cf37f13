import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { engine } from '../harness.ts';
import { CRON_SECRET, type Cluster, eventsSettled, keepaliveEverywhere, startInstances, type TestClock, testClock } from '../leases/instances.ts';

/**
 * Retention per workspace (issue 39 §4, spec/identity.md "Retention"): each workspace keeps its
 * events for its own `event_retention_days`, else the server's BATON_EVENT_RETENTION_DAYS; the
 * maintenance pass deletes older ones in that workspace only, once across instances, and a cursor
 * into the deleted range gets 410 `cursor_archived` naming that workspace's oldest cursor, while
 * another workspace's cursors and events are untouched.
 */

const DAY_MS = 86_400_000;
const SERVER_DAYS = 30;

let c: Cluster;
let clock: TestClock;
let b: string;

interface EventsPage {
  data: { id: string; type: string; created_at: string }[];
  next_cursor: string | null;
}

async function events(token: string | undefined, query = ''): Promise<EventsPage['data']> {
  await eventsSettled(c);
  const res = await c.request('GET', `/api/v1/events?order=asc&limit=100${query}`, token ? { token } : {});
  expect(res.status, res.body).toBe(200);
  return res.json<EventsPage>().data;
}

async function makeTasks(token: string | undefined, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const res = await c.request('POST', '/api/v1/tasks', { body: { title: `retention ${i}` }, ...(token ? { token } : {}) });
    expect(res.status, res.body).toBe(201);
  }
}

/** One maintenance pass on every instance at once; answers the events they deleted. */
function retentionPass(): Promise<number> {
  return keepaliveEverywhere(c, 'retention', 'events_deleted');
}

beforeAll(async () => {
  clock = testClock();
  c = await startInstances(engine === 'postgres' ? 2 : 1, { sweepIntervalMs: 0, webhookIntervalMs: 0, cronSecret: CRON_SECRET, eventRetentionDays: SERVER_DAYS }, clock);
  const made = await c.request('POST', '/api/v1/workspaces', { body: { name: `retention ${randomUUID()}` } });
  expect(made.status, made.body).toBe(201);
  b = made.json<{ token: string }>().token;
});
afterAll(() => c.close());

it("deletes a workspace's events older than its own retention, once, and leaves another workspace's alone", async () => {
  await makeTasks(undefined, 5);
  await makeTasks(b, 4);
  const aOld = await events(undefined);
  const bOld = await events(b);
  expect(bOld.length).toBeGreaterThanOrEqual(4);

  clock.advance(10 * DAY_MS);
  const set = await c.request('PATCH', '/api/v1/workspaces/current', { body: { event_retention_days: 7 } });
  expect(set.status, set.body).toBe(200);
  expect(set.json()).toMatchObject({ settings: { event_retention_days: 7 }, effective: { event_retention_days: 7 } });
  const bSettings = await c.request('GET', '/api/v1/workspaces/current', { token: b });
  expect(bSettings.json()).toMatchObject({ settings: { event_retention_days: null }, effective: { event_retention_days: SERVER_DAYS } });
  await makeTasks(undefined, 2);
  await eventsSettled(c);

  // Two instances run the pass at once: each old event is deleted by exactly one of them.
  expect(await retentionPass()).toBe(aOld.length);
  expect(await retentionPass()).toBe(0);

  const aNow = await events(undefined);
  expect(aNow.length).toBeGreaterThan(0);
  expect(aNow.every((e) => Date.parse(e.created_at) >= clock.now().getTime() - 7 * DAY_MS)).toBe(true);
  expect(aNow.some((e) => aOld.some((old) => old.id === e.id))).toBe(false);
  const refused = await c.request('GET', `/api/v1/events?since=${aOld[1]!.id}`);
  expect(refused.status, refused.body).toBe(410);
  expect(refused.json()).toMatchObject({ code: 'cursor_archived', oldest_cursor: aNow[0]!.id });

  // B keeps the server's 30 days: nothing of its own went, and its cursors still read.
  expect((await events(b)).map((e) => e.id)).toEqual(expect.arrayContaining(bOld.map((e) => e.id)));
  const bSince = await c.request('GET', `/api/v1/events?since=${bOld[0]!.id}`, { token: b });
  expect(bSince.status, bSince.body).toBe(200);
});

it("a workspace that sets none keeps the server's days; null in both keeps events for ever", async () => {
  const bBefore = await events(b);
  clock.advance((SERVER_DAYS - 10 + 1) * DAY_MS);
  await makeTasks(b, 1);
  await eventsSettled(c);
  const old = bBefore.filter((e) => Date.parse(e.created_at) < clock.now().getTime() - SERVER_DAYS * DAY_MS);
  expect(old.length).toBeGreaterThanOrEqual(4);
  // Some of B's first events (its making) are not in its owner's list; the pass counts every row.
  expect(await retentionPass()).toBeGreaterThanOrEqual(old.length);
  expect((await events(b)).some((e) => old.some((o) => o.id === e.id))).toBe(false);
  const refused = await c.request('GET', `/api/v1/events?since=${old[0]!.id}`, { token: b });
  expect(refused.json()).toMatchObject({ code: 'cursor_archived' });

  // Retention off for A: a year later its events are all still there.
  expect((await c.request('PATCH', '/api/v1/workspaces/current', { body: { event_retention_days: null } })).status).toBe(200);
  const a = await events(undefined);
  clock.advance(365 * DAY_MS);
  const unchanged = await c.request('PATCH', '/api/v1/workspaces/current', { body: { event_retention_days: 36_500 } });
  expect(unchanged.status, unchanged.body).toBe(200);
  await retentionPass();
  expect((await events(undefined)).map((e) => e.id)).toEqual(expect.arrayContaining(a.map((e) => e.id)));
});

it('refuses a retention of no days', async () => {
  const res = await c.request('PATCH', '/api/v1/workspaces/current', { body: { event_retention_days: 0 } });
  expect(res.status).toBe(400);
  expect(res.headers['content-type']).toContain('application/problem+json');
});
