import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, expectProblem } from './fixtures.ts';
import { eventsSettled } from '../leases/instances.ts';

interface EventBody {
  id: string;
  type: string;
  subject: string;
  actor: { id: string; kind: string };
}
interface Page {
  data: EventBody[];
  has_more: boolean;
  next_cursor: string | null;
}

/** The event list's actor filters (`actor`, `actor_kind`): a quiet principal's events, however many others wrote since. */
describe('GET /events filtered by actor', () => {
  let t: TestServer;
  let quiet: Principal;
  let busy: Principal;
  const quietTasks: string[] = [];

  beforeAll(async () => {
    t = await startTestServer({ sweepIntervalMs: 0 });
    quiet = await t.addPrincipal({ name: 'quiet-bot' });
    busy = await t.addPrincipal({ name: 'busy-bot' });
    for (let i = 0; i < 2; i++) quietTasks.push((await createTask(t, { title: `quiet ${i}` }, quiet.token)).id);
    // More than a page of events by someone else, all newer than the quiet agent's.
    for (let i = 0; i < 105; i++) await createTask(t, { title: `busy ${i}` }, busy.token);
    await createTask(t, { title: 'by a human' });
    // Every event readable: a transaction open elsewhere on a shared PostgreSQL (another test file's) holds the newest back, and the
    // newest page would then reach back to the quiet agent's.
    await eventsSettled(t);
  });
  afterAll(() => t?.close());

  /** The page at `url` once it holds `count` events: a page stays behind a transaction still open elsewhere on a shared PostgreSQL. */
  const pageOf = async (url: string, count: number, token?: string): Promise<Page> => {
    let page: Page = { data: [], has_more: false, next_cursor: null };
    await expect
      .poll(async () => {
        const res = await t.request('GET', url, token ? { token } : {});
        expect(res.status, res.body).toBe(200);
        page = res.json<Page>();
        return page.data.length;
      }, { timeout: 15_000 })
      .toBeGreaterThanOrEqual(count);
    return page;
  };

  it("finds a principal's events behind more than a page of newer events by others", async () => {
    const newest = await pageOf('/api/v1/events?order=desc&limit=100', 100);
    expect(newest.data.some((e) => e.actor.id === quiet.id)).toBe(false);
    const page = await pageOf(`/api/v1/events?order=desc&limit=100&actor=${quiet.id}`, 2);
    expect(page.data.map((e) => e.actor.id)).toEqual(page.data.map(() => quiet.id));
    expect(page.data.map((e) => e.subject)).toEqual(expect.arrayContaining(quietTasks));
    expect(page.has_more).toBe(false);
    // `me` is the caller.
    const mine = await pageOf('/api/v1/events?order=desc&actor=me', 2, quiet.token);
    expect(mine.data.map((e) => e.id)).toEqual(page.data.map((e) => e.id));
  });

  it('pages through one actor’s events with the cursor, in both orders', async () => {
    const first = await pageOf(`/api/v1/events?order=desc&limit=1&actor=${quiet.id}&types=task.created`, 1);
    expect(first.has_more).toBe(true);
    const second = await pageOf(`/api/v1/events?order=desc&limit=1&actor=${quiet.id}&types=task.created&cursor=${encodeURIComponent(first.next_cursor ?? '')}`, 1);
    expect([...first.data, ...second.data].map((e) => e.subject)).toEqual([...quietTasks].reverse());
    const forward = await pageOf(`/api/v1/events?limit=1&actor=${quiet.id}&types=task.created`, 1);
    expect(forward.data[0]?.subject).toBe(quietTasks[0]);
  });

  it('filters by the kind of actor, alone or with an actor', async () => {
    const humans = await pageOf('/api/v1/events?order=desc&limit=100&actor_kind=human', 1);
    expect(new Set(humans.data.map((e) => e.actor.kind))).toEqual(new Set(['human']));
    const agents = await pageOf('/api/v1/events?order=desc&limit=100&actor_kind=agent', 100);
    expect(new Set(agents.data.map((e) => e.actor.kind))).toEqual(new Set(['agent']));
    const none = await t.request('GET', `/api/v1/events?actor=${quiet.id}&actor_kind=human`);
    expect(none.json<Page>().data).toEqual([]);
  });

  it('refuses an actor that is not a principal id, me or system, naming the parameter', async () => {
    const problem = expectProblem(await t.request('GET', '/api/v1/events?actor=quiet-bot'), 400, 'invalid_parameter');
    expect(JSON.stringify(problem)).toContain('actor');
    expectProblem(await t.request('GET', '/api/v1/events?actor_kind=robot'), 400, 'invalid_parameter');
  });
});
