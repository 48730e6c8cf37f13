import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIds } from '../../src/ids.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, expectProblem, setTaskState, type TaskBody, whoami } from './fixtures.ts';

interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  sync_cursor: string | null;
}
interface EventBody {
  id: string;
  type: string;
  subject: string;
  actor: { id: string; kind: string };
  data: Record<string, unknown>;
  created_at: string;
  token_id?: string | null;
  machine?: string | null;
  idempotency_key?: string | null;
}

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 }); // no background writer: the event tests compare pages with the table
});
afterAll(() => t.close());

async function getPage<T>(url: string, token?: string): Promise<Page<T>> {
  const res = await t.request('GET', url, token ? { token } : {});
  expect(res.status, `${url}: ${res.body}`).toBe(200);
  return res.json<Page<T>>();
}

/**
 * `getPage(url)` once its sync_cursor has caught up with the newest event. A cursor stays below
 * the oldest transaction still open anywhere on the server (src/store/events.ts), so on a
 * PostgreSQL shared with other test files it can lag for a moment; it never skips.
 */
async function settledPage<T>(url: string): Promise<Page<T>> {
  // A loop, not expect.poll: a beforeAll uses it too.
  for (const deadline = Date.now() + 15_000; ; await sleep(50)) {
    const page = await getPage<T>(url);
    if (page.sync_cursor === (await eventIdsInCommitOrder()).at(-1)) return page;
    if (Date.now() > deadline) throw new Error(`${url}: sync_cursor ${page.sync_cursor} has not caught up with the newest event in 15 s`);
  }
}

/** Follows next_cursor from `url` until has_more is false; returns every page. */
async function allPages<T>(url: string): Promise<Page<T>[]> {
  const pages: Page<T>[] = [];
  let cursor: string | null = null;
  do {
    const separator = url.includes('?') ? '&' : '?';
    const page: Page<T> = await getPage<T>(cursor === null ? url : `${url}${separator}cursor=${encodeURIComponent(cursor)}`);
    pages.push(page);
    if (page.has_more) expect(page.next_cursor).toEqual(expect.any(String));
    else expect(page.next_cursor).toBeNull();
    cursor = page.next_cursor;
    expect(pages.length).toBeLessThan(50);
  } while (cursor !== null);
  return pages;
}

const ids = <T extends { id: string }>(items: T[]) => items.map((i) => i.id);
/** A cursor the server never issued: a real one with its position swapped, its signature kept. */
function forge(real: string, position: string): string {
  const [body = '', signature = ''] = real.split('.');
  const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
  expect(decoded).toHaveProperty('p');
  return `${Buffer.from(JSON.stringify({ ...decoded, p: position })).toString('base64url')}.${signature}`;
}

async function eventIdsInCommitOrder(subject?: string): Promise<string[]> {
  let query = t.database.db.selectFrom('events').select('id').orderBy('seq', 'asc');
  if (subject) query = query.where('subject', '=', subject);
  return (await query.execute()).map((r) => r.id);
}

describe('GET /tasks pagination', () => {
  let created: string[];
  beforeAll(async () => {
    created = [];
    for (let i = 0; i < 60; i++) created.push((await createTask(t, { title: `page task ${i}`, labels: ['paged'] })).id);
  });

  it('limit=25 pages through 60 tasks: 25, 25, 10, newest first, each exactly once', async () => {
    const pages = await allPages<TaskBody>('/api/v1/tasks?labels=paged&limit=25');
    expect(pages.map((p) => p.data.length)).toEqual([25, 25, 10]);
    const seen = pages.flatMap((p) => ids(p.data));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual([...created].reverse());
  });

  it('paging the whole collection with the default limit sees every task exactly once, 25 at a time', async () => {
    const pages = await allPages<TaskBody>('/api/v1/tasks');
    for (const page of pages) expect(page.data.length).toBeLessThanOrEqual(25);
    const seen = pages.flatMap((p) => ids(p.data));
    expect(new Set(seen).size).toBe(seen.length);
    const all = await t.database.db.selectFrom('tasks').select('id').execute();
    expect(seen.sort()).toEqual(ids(all).sort());
  });

  it('no page holds more than 100 items', async () => {
    for (let i = 0; i < 45; i++) await createTask(t, { title: `filler ${i}` });
    const total = (await t.database.db.selectFrom('tasks').select('id').execute()).length;
    expect(total).toBeGreaterThan(100);
    const page = await getPage<TaskBody>('/api/v1/tasks?limit=100');
    expect(page.data).toHaveLength(100);
    expect(page.has_more).toBe(true);
    const pages = await allPages<TaskBody>('/api/v1/tasks?limit=100');
    expect(pages.map((p) => p.data.length)).toEqual([100, total - 100]);
  });
});

describe('GET /tasks filters and views', () => {
  it('filters by status (one or several)', async () => {
    const label = 'status-filter';
    const todo = await createTask(t, { labels: [label] });
    const blocked = await createTask(t, { labels: [label] });
    const done = await createTask(t, { labels: [label] });
    await setTaskState(t, blocked.id, 'blocked');
    await setTaskState(t, done.id, 'done');

    const onlyBlocked = await getPage<TaskBody>(`/api/v1/tasks?labels=${label}&status=blocked`);
    expect(ids(onlyBlocked.data)).toEqual([blocked.id]);
    expect(onlyBlocked.data[0]?.status).toBe('blocked');
    const two = await getPage<TaskBody>(`/api/v1/tasks?labels=${label}&status=todo,done`);
    expect(ids(two.data).sort()).toEqual([todo.id, done.id].sort());
  });

  it('filters by id_prefix: a prefix of the ULID (6 or more characters, any case) names the tasks whose id starts with it', async () => {
    const a = await createTask(t);
    const b = await createTask(t);
    const ulid = a.id.slice('tsk_'.length);
    expect(ids((await getPage<TaskBody>(`/api/v1/tasks?id_prefix=${ulid}`)).data)).toEqual([a.id]);
    expect(ids((await getPage<TaskBody>(`/api/v1/tasks?id_prefix=${ulid.slice(0, 12).toLowerCase()}`)).data)).toContain(a.id);
    const six = await getPage<TaskBody>(`/api/v1/tasks?id_prefix=${ulid.slice(0, 6)}&limit=100`);
    expect(ids(six.data)).toContain(a.id);
    for (const id of ids(six.data)) expect(id.startsWith(`tsk_${ulid.slice(0, 6)}`)).toBe(true);
    // Two tasks made moments apart share the ULID's time part: their common prefix names both.
    const common = ulid.slice(0, [...ulid].findIndex((c, i) => c !== b.id.slice(4)[i]));
    if (common.length >= 6) expect(ids((await getPage<TaskBody>(`/api/v1/tasks?id_prefix=${common}&limit=100`)).data)).toEqual(expect.arrayContaining([a.id, b.id]));
    expect((await getPage<TaskBody>('/api/v1/tasks?id_prefix=000000')).data).toEqual([]);
    expectProblem(await t.request('GET', `/api/v1/tasks?id_prefix=${ulid.slice(0, 5)}`), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', '/api/v1/tasks?id_prefix=01JX4-'), 400, 'invalid_parameter');
    expect((await getPage<TaskBody>('/api/v1/tasks?id_prefix=UUUUUU')).data).toEqual([]);
  });

  it('filters by labels: a task must carry every label asked for', async () => {
    const both = await createTask(t, { labels: ['lx', 'ly'] });
    const onlyX = await createTask(t, { labels: ['lx'] });
    const onlyY = await createTask(t, { labels: ['ly'] });
    expect(ids((await getPage<TaskBody>('/api/v1/tasks?labels=lx,ly')).data)).toEqual([both.id]);
    expect(ids((await getPage<TaskBody>('/api/v1/tasks?labels=lx')).data).sort()).toEqual([both.id, onlyX.id].sort());
    expect(ids((await getPage<TaskBody>('/api/v1/tasks?labels=ly')).data).sort()).toEqual([both.id, onlyY.id].sort());
  });

  it('fields=labels returns the core (id, title, status, version) and labels, on lists and on one task', async () => {
    const task = await createTask(t, { title: 'projected', labels: ['fields'] });
    const page = await getPage<Record<string, unknown>>('/api/v1/tasks?labels=fields&fields=labels');
    const expected = { id: task.id, title: 'projected', status: 'todo', labels: ['fields'], version: 1 };
    expect(page.data).toEqual([expected]);
    const one = await t.request('GET', `/api/v1/tasks/${task.id}?fields=labels`);
    expect(one.json()).toEqual(expected);
    expect(Object.keys(one.json<object>())).toEqual(['id', 'title', 'status', 'labels', 'version']);
    expectProblem(await t.request('GET', '/api/v1/tasks?fields=colour'), 400, 'invalid_parameter');
  });

  it('compact items leave out the description; view=full includes it and created_by {id, kind}', async () => {
    const me = await whoami(t);
    const agent: Principal = await t.addPrincipal({ kind: 'agent' });
    const byHuman = await createTask(t, { title: 'by human', description: 'long text', labels: ['views'] });
    const byAgent = await createTask(t, { title: 'by agent', labels: ['views'] }, agent.token);

    const compact = await getPage<Record<string, unknown>>('/api/v1/tasks?labels=views');
    for (const item of compact.data) expect(item).not.toHaveProperty('description');

    const full = await getPage<Record<string, unknown>>('/api/v1/tasks?labels=views&view=full');
    const human = full.data.find((d) => d.id === byHuman.id);
    const machine = full.data.find((d) => d.id === byAgent.id);
    expect(human).toMatchObject({ description: 'long text', created_by: { id: me.principal.id, kind: 'human' }, updated_by: { id: me.principal.id, kind: 'human' } });
    expect(machine).toMatchObject({ description: '', created_by: { id: agent.id, kind: 'agent' } });
    expect(human?.created_at).toEqual(expect.any(String));
  });

  // The default list reads only the columns its items show (store/tasks.ts, `columns: 'list'`); it must say what the whole rows say.
  it('default items are the full items cut to the list fields, plus parent_id, due_at, overdue and assignee where set, and deleted_at on a tombstone', async () => {
    const assignee = await t.addPrincipal({ name: 'listcols-bot' });
    await createTask(t, { title: 'assigned', labels: ['listcols'], assignee: assignee.id });
    const blocker = await createTask(t, { title: 'blocker', labels: ['listcols'] });
    const parent = await createTask(t, { title: 'parent', labels: ['listcols'], description: 'not in a list item' });
    await createTask(t, { title: 'child, overdue', labels: ['listcols'], parent_id: parent.id, due_at: '2020-01-01T00:00:00.000Z' });
    await createTask(t, { title: 'due later', labels: ['listcols'], due_at: '2999-01-01T00:00:00.000Z' });
    await createTask(t, { title: 'waits', labels: ['listcols'], blocked_by: [blocker.id] });
    const claimed = await t.request('POST', `/api/v1/tasks/${blocker.id}/claim`, { body: {}, headers: { 'idempotency-key': randomUUID() } });
    expect(claimed.status, claimed.body).toBe(200);
    const gone = await createTask(t, { title: 'deleted', labels: ['listcols'], due_at: '2020-01-01T00:00:00.000Z' });
    const sync = (await settledPage('/api/v1/tasks?labels=listcols&limit=1')).sync_cursor;
    const deleted = await t.request('DELETE', `/api/v1/tasks/${gone.id}`, { headers: { 'idempotency-key': randomUUID(), 'if-match': '"1"' } });
    expect(deleted.status, deleted.body).toBe(200);

    const base = ['id', 'title', 'status', 'priority', 'labels', 'version', 'lease', 'waiting_on', 'legal_transitions', 'updated_at'];
    const check = async (query: string, count: number) => {
      const compact = (await getPage<Record<string, unknown>>(`/api/v1/tasks?${query}`)).data;
      const full = (await getPage<Record<string, unknown>>(`/api/v1/tasks?${query}&view=full`)).data;
      expect(compact.map((item) => item.id)).toEqual(full.map((item) => item.id));
      expect(compact).toHaveLength(count);
      compact.forEach((item, i) => {
        const whole = full[i] ?? {};
        const keys = [...base, ...(whole.deleted_at ? ['deleted_at'] : []), ...['parent_id', 'due_at'].filter((k) => whole[k] !== null), ...(whole.overdue ? ['overdue'] : []), ...(whole.assignee ? ['assignee'] : [])];
        expect(Object.keys(item)).toEqual(keys);
        expect(item).toEqual(Object.fromEntries(keys.map((k) => [k, whole[k]])));
      });
      return compact;
    };
    const live = await check('labels=listcols', 6);
    expect(live.find((item) => item.title === 'assigned')).toMatchObject({ assignee: { id: assignee.id, kind: 'agent' } });
    expect(live.find((item) => item.title === 'waits')).toMatchObject({ waiting_on: [blocker.id] });
    expect(live.find((item) => item.id === blocker.id)?.lease).not.toBeNull();
    expect(live.find((item) => item.title === 'child, overdue')).toMatchObject({ parent_id: parent.id, overdue: true });
    await settledPage('/api/v1/tasks?limit=1'); // the deletion's event is past every open transaction
    const delta = await check(`labels=listcols&since=${sync ?? ''}`, 1);
    expect(delta[0]).toMatchObject({ id: gone.id, legal_transitions: [] });
    expect(delta[0]?.deleted_at).toEqual(expect.any(String));
  });
});

describe('GET /tasks?since (delta sync)', () => {
  it('returns exactly the tasks changed after the sync_cursor', async () => {
    const [a, b] = [await createTask(t, { title: 'since a' }), await createTask(t, { title: 'since b' }), await createTask(t, { title: 'since c' })];
    const { sync_cursor: cursor } = await settledPage<TaskBody>('/api/v1/tasks?limit=1');
    expect(cursor).toMatch(/^evt_/);

    const updated = await t.request('PATCH', `/api/v1/tasks/${b?.id}`, { body: { title: 'since b, changed' } });
    expect(updated.status).toBe(200);
    const d = await createTask(t, { title: 'since d' });

    const delta = await settledPage<TaskBody>(`/api/v1/tasks?since=${cursor}`);
    expect(ids(delta.data).sort()).toEqual([b?.id, d.id].sort());
    expect(ids(delta.data)).not.toContain(a?.id);

    const nothing = await getPage<TaskBody>(`/api/v1/tasks?since=${delta.sync_cursor}`);
    expect(nothing.data).toEqual([]);
    expect(nothing.sync_cursor).toBe(delta.sync_cursor);
  });

  it('since naming no event is 400 invalid_parameter; a malformed one too', async () => {
    const unknown = expectProblem(await t.request('GET', `/api/v1/tasks?since=${createIds().make('evt')}`), 400, 'invalid_parameter');
    expect(unknown.errors).toEqual([expect.objectContaining({ pointer: '/since' })]);
    const malformed = expectProblem(await t.request('GET', '/api/v1/tasks?since=yesterday'), 400, 'invalid_parameter');
    expect(malformed.errors).toEqual([expect.objectContaining({ pointer: '/since' })]);
  });

  it('a cursor the server did not issue is 400 invalid_parameter', async () => {
    for (const cursor of ['garbage!!', 'bm90LWpzb24', Buffer.from('{"q":1}').toString('base64url'), Buffer.from('[]').toString('base64url')]) {
      const problem = expectProblem(await t.request('GET', `/api/v1/tasks?cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_parameter');
      expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/cursor' })]);
    }
  });
});

describe('GET /events and /tasks/{id}/events', () => {
  let agent: Principal;
  let subject: string;
  const keys: string[] = [];
  beforeAll(async () => {
    agent = await t.addPrincipal({ kind: 'agent' });
    const key = randomUUID();
    keys.push(key);
    const created = await t.request('POST', '/api/v1/tasks', { token: agent.token, key, body: { title: 'event subject' } });
    expect(created.status).toBe(201);
    subject = created.json<TaskBody>().id;
    for (let i = 0; i < 6; i++) {
      const k = randomUUID();
      keys.push(k);
      const res = await t.request('PATCH', `/api/v1/tasks/${subject}`, { token: agent.token, key: k, body: { title: `event subject ${i}` } });
      expect(res.status).toBe(200);
    }
    // Every event below is compared with the table: wait until cursors may pass all of them.
    await settledPage('/api/v1/tasks?limit=1');
  });

  it('pages the whole timeline in commit order with no duplicates or gaps', async () => {
    const pages = await allPages<EventBody>('/api/v1/events?limit=7');
    for (const page of pages) expect(page.data.length).toBeLessThanOrEqual(7);
    const seen = pages.flatMap((p) => ids(p.data));
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(await eventIdsInCommitOrder());
  });

  it('since returns only later events, and paging from since keeps the order', async () => {
    const order = await eventIdsInCommitOrder();
    const from = order[Math.floor(order.length / 2)] ?? '';
    const pages = await allPages<EventBody>(`/api/v1/events?since=${from}&limit=5`);
    expect(pages.flatMap((p) => ids(p.data))).toEqual(order.slice(order.indexOf(from) + 1));

    const last = order.at(-1) ?? '';
    const caughtUp = await getPage<EventBody>(`/api/v1/events?since=${last}`);
    expect(caughtUp).toMatchObject({ data: [], has_more: false, next_cursor: null, sync_cursor: last });
  });

  it("a task's history: only its events, in commit order, with since and cursor", async () => {
    const order = await eventIdsInCommitOrder(subject);
    expect(order.length).toBeGreaterThanOrEqual(7);
    const pages = await allPages<EventBody>(`/api/v1/tasks/${subject}/events?limit=3`);
    const seen = pages.flatMap((p) => p.data);
    expect(ids(seen)).toEqual(order);
    for (const event of seen) expect(event.subject).toBe(subject);
    expect(seen[0]?.type).toBe('task.created');

    const afterFirst = await allPages<EventBody>(`/api/v1/tasks/${subject}/events?since=${order[0]}&limit=2`);
    expect(afterFirst.flatMap((p) => ids(p.data))).toEqual(order.slice(1));
  });

  it('every event names its actor; view=full adds token_id, machine and idempotency_key', async () => {
    const who = await whoami(t, agent.token);
    const compact = await getPage<EventBody>(`/api/v1/tasks/${subject}/events?limit=100`);
    for (const event of compact.data) {
      expect(event.actor).toEqual({ id: agent.id, kind: 'agent' });
      expect(event).not.toHaveProperty('token_id');
      expect(event).not.toHaveProperty('idempotency_key');
    }
    const full = await getPage<EventBody>(`/api/v1/tasks/${subject}/events?limit=100&view=full`);
    expect(full.data.map((e) => e.idempotency_key)).toEqual(keys);
    for (const event of full.data) {
      expect(event).toMatchObject({ actor: { id: agent.id, kind: 'agent' }, token_id: who.token.id, machine: 'test-machine' });
    }

    const timeline = await getPage<EventBody>('/api/v1/events?limit=100&view=full');
    for (const event of timeline.data) {
      expect(Object.keys(event.actor).sort()).toEqual(['id', 'kind']);
      expect(event.actor.id.length).toBeGreaterThan(0);
      expect(['human', 'agent', 'system']).toContain(event.actor.kind);
      for (const member of ['token_id', 'machine', 'idempotency_key']) expect(event).toHaveProperty(member);
    }
  });

  it('an events cursor the server did not issue is 400 invalid_parameter, not a crash', async () => {
    const real = (await getPage<EventBody>('/api/v1/events?limit=1')).next_cursor ?? '';
    expect(real).not.toBe('');
    for (const url of ['/api/v1/events', `/api/v1/tasks/${subject}/events`]) {
      for (const cursor of ['garbage!!', forge(real, 'not-a-number'), forge(real, '99999999999999999999999'), forge(real, "1' OR '1'='1")]) {
        const problem = expectProblem(await t.request('GET', `${url}?cursor=${encodeURIComponent(cursor)}`), 400, 'invalid_parameter');
        expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/cursor' })]);
      }
    }
  });

  it("a cursor from another list is 400 invalid_parameter, not a crash or a wrong page", async () => {
    const tasksCursor = (await getPage<TaskBody>('/api/v1/tasks?limit=1')).next_cursor ?? '';
    const eventsCursor = (await getPage<EventBody>('/api/v1/events?limit=1')).next_cursor ?? '';
    expect(tasksCursor).not.toBe('');
    expect(eventsCursor).not.toBe('');
    expectProblem(await t.request('GET', `/api/v1/events?cursor=${tasksCursor}`), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', `/api/v1/tasks?cursor=${eventsCursor}`), 400, 'invalid_parameter');
  });

  it('since naming no event is 400 invalid_parameter on the event lists', async () => {
    expectProblem(await t.request('GET', `/api/v1/events?since=${createIds().make('evt')}`), 400, 'invalid_parameter');
    expectProblem(await t.request('GET', `/api/v1/tasks/${subject}/events?since=${createIds().make('evt')}`), 400, 'invalid_parameter');
  });
});
