/**
 * Tampered cursors (issue 36 item 9): every cursor of every list is signed with the server's cursor
 * key, so a forged, mutated, truncated or borrowed one is a 400 `invalid_parameter` naming `cursor`,
 * never a 5xx and never a page. The lists come from the registry (every read whose input has a
 * `cursor`); the mutations from a seeded generator, so a failing run is reproduced from its seed.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { createIds } from '../../src/ids.ts';
import { graphql } from '../graphql/client.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, problemOf } from '../mcp/clients.ts';
import { createTask, expectProblem } from '../rest/fixtures.ts';
import { prng } from './fuzz-requests.ts';

const SEED = Number(process.env.BATON_FUZZ_SEED ?? 36_009);
/** Mutated cursors sent to each list over REST; fewer over MCP and GraphQL, which share the operation. */
const MUTATIONS_PER_LIST = 40;
const MUTATIONS_PER_ADAPTER = 15;

interface Page {
  data: { id: string }[];
  next_cursor: string | null;
}

/** A list to send cursors to: its URL (path parameters filled in) and a cursor it issued, when it has two items to page. */
interface List {
  name: string;
  url: string;
  issued: string | undefined;
}

let t: TestServer;
let lists: List[];
let mcp: Client | undefined;

/** A cursor's parts: its base64url JSON body and (signed cursors) its signature. */
function parts(cursor: string): { body: Record<string, unknown>; signature: string | undefined } {
  const [body = '', signature] = cursor.split('.');
  return { body: JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>, signature };
}

/** `cursor` with its body replaced by `body` (re-encoded), its signature kept. */
function reencode(cursor: string, body: unknown): string {
  const { signature } = parts(cursor);
  const encoded = Buffer.from(JSON.stringify(body)).toString('base64url');
  return signature === undefined ? encoded : `${encoded}.${signature}`;
}

beforeAll(async () => {
  t = await startTestServer();
  const tasks = [];
  for (let i = 0; i < 3; i++) tasks.push(await createTask(t, { title: `cursor widget ${i}`, labels: ['cursors'] }));
  const [first, second] = tasks;
  if (!first || !second) throw new Error('no tasks');
  for (const task of [first, second]) expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {} })).status).toBe(200);
  for (const body of ['one', 'two']) expect((await t.request('POST', `/api/v1/tasks/${first.id}/comments`, { body: { body } })).status).toBe(201);
  const agent = await t.addPrincipal({ kind: 'agent' });
  expect((await t.request('POST', `/api/v1/agents/${agent.id}/tokens`, { body: { machine: 'second' } })).status).toBe(201);
  const pathIds: Record<string, string> = { tasks: first.id, agents: agent.id, webhooks: createIds().make('whk') };
  const paged = operations.filter((op) => op.kind === 'read' && 'cursor' in op.input.shape);
  const urls = paged.map((op) => ({ name: op.name, url: `/api/v1${op.http.path.replace('{id}', pathIds[op.http.path.split('/')[1] ?? ''] ?? '')}` }));
  // An export pages through a window of one dataset.
  for (const entry of urls) if (entry.name === 'exports_get') entry.url = '/api/v1/exports/events?from=2000-01-01&to=2100-01-01';
  // The task list's ranked search pages with cursors of its own.
  urls.push({ name: 'tasks_list (q)', url: '/api/v1/tasks?q=widget' });
  lists = [];
  for (const { name, url } of urls) {
    // The webhook is made up (creating one needs an approval): its deliveries list answers 404, and no cursor.
    const res = await t.request('GET', `${url}${url.includes('?') ? '&' : '?'}limit=1`);
    expect(res.status, res.body).toBe(name === 'webhooks_deliveries' ? 404 : 200);
    lists.push({ name, url, issued: res.status === 200 ? (res.json<Page>().next_cursor ?? undefined) : undefined });
  }
  mcp = await connectV2(await listen(t), t.adminToken, 'modern');
});
afterAll(async () => {
  await mcp?.close();
  await t?.close();
});

/** What a cursor holds: the list kind it was issued for. */
const kindOf = (cursor: string) => parts(cursor).body.k;

/** Values no list issues, put where a position or a kind goes. */
const ODD_VALUES: unknown[] = [
  '1e400', '1e400 tsk_01JZZZZZZZZZZZZZZZZZZZZZZZ 0123456789abcdef', 'NaN', 'Infinity', '-1', '0', '99999999999999999999', '9223372036854775808',
  '', ' ', "1' OR '1'='1", '\u0000', 'tsk_\u{1F600}', 'x'.repeat(300), null, 12, 1e400, {}, [], true,
];

/** `count` cursors made from the real ones by the generator seeded with `seed`; none is one the server issued. */
function mutations(own: string | undefined, seed: number, count: number): string[] {
  const r = prng(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(r() * items.length)] as T;
  const issued = lists.flatMap((list) => (list.issued ? [list.issued] : []));
  const others = issued.filter((cursor) => own === undefined || kindOf(cursor) !== kindOf(own));
  const base = () => own ?? pick(issued);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/%';
  const makers: (() => string)[] = [
    // a character changed (a flipped bit, as the alphabet goes)
    () => {
      const cursor = base();
      const at = Math.floor(r() * cursor.length);
      const was = cursor[at];
      let now = pick([...alphabet]);
      while (now === was) now = pick([...alphabet]);
      return `${cursor.slice(0, at)}${now}${cursor.slice(at + 1)}`;
    },
    // cut short, or grown
    () => base().slice(0, 1 + Math.floor(r() * (base().length - 1))),
    () => `${base()}${pick([...alphabet])}`,
    // the body re-encoded with an odd position or kind, the signature kept or dropped
    () => reencode(base(), { ...parts(base()).body, p: pick(ODD_VALUES) }),
    () => reencode(base(), { ...parts(base()).body, k: pick(['tasks', 'events', 'task_search', 'deliveries', 'nope', null]) }),
    () => reencode(base(), { ...parts(base()).body, extra: pick(ODD_VALUES) }),
    () => reencode(base(), pick(ODD_VALUES)),
    () => reencode(base(), parts(base()).body).split('.')[0] ?? '',
    // another list's cursor, and one cursor's body under another's signature
    () => (others.length > 0 ? pick(others) : 'e30.AAAAAAAAAAAAAAAAAAAAAA'),
    () => `${base().split('.')[0] ?? ''}.${pick(issued).split('.')[1] ?? ''}`,
    // not a cursor at all
    () => pick(['.', '..', 'a.b', 'e30', 'e30.', '.e30', '%00', '\u00e9t\u00e9', ' ', 'null', `${base()}.${base()}`]),
  ];
  const made: string[] = [];
  while (made.length < count) {
    const cursor = pick(makers)();
    if (!issued.includes(cursor)) made.push(cursor);
  }
  return made;
}

describe('a tampered cursor is 400 invalid_parameter naming cursor, never a 5xx', () => {
  it('a search cursor whose rank is 1e400 (it answered a retryable 500)', async () => {
    const list = lists.find((l) => l.name === 'tasks_list (q)');
    expect(list?.issued).toEqual(expect.any(String));
    const real = list?.issued ?? '';
    const [, id, digest] = String(parts(real).body.p).split(' ');
    const forged = reencode(real, { ...parts(real).body, p: `1e400 ${id} ${digest}` });
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks?q=widget&cursor=${encodeURIComponent(forged)}`), 400, 'invalid_parameter');
    expect(problem.retryable).toBe(false);
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/cursor' })]);
  });

  it('a cursor a list issued still pages it', async () => {
    for (const list of lists.filter((l) => l.issued)) {
      const res = await t.request('GET', `${list.url}${list.url.includes('?') ? '&' : '?'}limit=1&cursor=${encodeURIComponent(list.issued ?? '')}`);
      expect(res.status, `${list.name}: ${res.body}`).toBe(200);
    }
  });

  it('a cursor in the unsigned form issued before cursors were signed, hinting to start from the first page', async () => {
    const tasks = lists.find((l) => l.name === 'tasks_list');
    const unsigned = (tasks?.issued ?? '').split('.')[0] ?? '';
    expect(parts(unsigned).body).toMatchObject({ k: 'tasks' });
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks?cursor=${unsigned}`), 400, 'invalid_parameter');
    expect(problem.hint).toMatch(/first page/);
  });

  it(`every cursor-taking list in the registry, over REST: ${MUTATIONS_PER_LIST} mutated cursors each (seed ${SEED})`, { timeout: 300_000 }, async () => {
    expect(lists.map((l) => l.name)).toEqual(expect.arrayContaining(['tasks_list', 'events_list', 'tasks_events', 'leases_list', 'approvals_list', 'agents_list', 'webhooks_list']));
    // Enough lists hand out cursors that every mutation has real ones to start from.
    expect(lists.filter((l) => l.issued).length).toBeGreaterThanOrEqual(6);
    const failures: string[] = [];
    for (const [i, list] of lists.entries()) {
      for (const cursor of mutations(list.issued, SEED + i, MUTATIONS_PER_LIST)) {
        const url = `${list.url}${list.url.includes('?') ? '&' : '?'}cursor=${encodeURIComponent(cursor)}`;
        const res = await t.request('GET', url);
        const body = res.json<{ code?: string; errors?: { pointer: string }[] }>();
        if (res.status !== 400 || body.code !== 'invalid_parameter' || !body.errors?.some((e) => e.pointer === '/cursor')) {
          failures.push(`${list.name} ${JSON.stringify(cursor)}: ${res.status} ${res.body.slice(0, 300)}`);
        }
      }
    }
    expect(failures, `seed ${SEED}: rerun with BATON_FUZZ_SEED=${SEED}`).toEqual([]);
  });

  it('over MCP and GraphQL too', { timeout: 120_000 }, async () => {
    const own = (name: string) => lists.find((l) => l.name === name)?.issued;
    for (const [tool, issued] of [['tasks_list', own('tasks_list')], ['events_list', own('events_list')]] as const) {
      for (const cursor of mutations(issued, SEED + 100, MUTATIONS_PER_ADAPTER)) {
        const problem = problemOf(await (mcp as Client).callTool({ name: tool, arguments: { cursor } }));
        expect(problem, `${tool} ${JSON.stringify(cursor)}`).toMatchObject({ status: 400, code: 'invalid_parameter' });
      }
    }
    for (const cursor of mutations(own('tasks_list (q)'), SEED + 200, MUTATIONS_PER_ADAPTER)) {
      const res = await graphql(t, 'query ($cursor: String) { tasks(q: "widget", cursor: $cursor) { data { id } } }', { variables: { cursor } });
      expect(res.errors?.[0]?.extensions, JSON.stringify(cursor)).toMatchObject({ code: 'invalid_parameter', status: 400 });
    }
  });
});
