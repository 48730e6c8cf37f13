import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from '../graphql/client.ts';

/**
 * The directory (spec/identity.md, "The directory"): every caller that reads tasks names the
 * workspace's people and agents, and learns nothing else of them; another workspace's caller finds
 * none of them.
 */

interface Entry {
  id: string;
  kind: 'human' | 'agent';
  name: string;
  handle: string | null;
  disabled: boolean;
}
interface Page {
  data: Entry[];
  has_more: boolean;
  next_cursor: string | null;
}

let t: TestServer;
let member: string;
let lead: Entry;
let bot: Entry;
let retired: Entry;

async function created(body: Record<string, unknown>): Promise<string> {
  const res = await t.request('POST', '/api/v1/agents', { body });
  expect(res.status, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

async function directory(query: string, token = member): Promise<Page> {
  const res = await t.request('GET', `/api/v1/directory${query}`, { token });
  expect(res.status, res.body).toBe(200);
  return res.json<Page>();
}

beforeAll(async () => {
  t = await startTestServer();
  const memberId = await created({ name: 'Mia Member', kind: 'human', role: 'member' });
  const issued = await t.request('POST', `/api/v1/agents/${memberId}/tokens`, { body: { machine: 'laptop' } });
  expect(issued.status, issued.body).toBe(201);
  member = issued.json<{ token: string }>().token;
  const leadId = await created({ name: 'Alice Lead', kind: 'human', role: 'admin' });
  const botId = await created({ name: 'build-bot-7', scopes: ['tasks:read', 'tasks:claim'] });
  const retiredId = await created({ name: 'old-bot', scopes: ['tasks:read'] });
  const disabled = await t.request('PATCH', `/api/v1/agents/${retiredId}`, { body: { disabled: true } });
  expect(disabled.status, disabled.body).toBe(200);
  lead = { id: leadId, kind: 'human', name: 'Alice Lead', handle: 'Alice_Lead', disabled: false };
  bot = { id: botId, kind: 'agent', name: 'build-bot-7', handle: 'build-bot-7', disabled: false };
  retired = { id: retiredId, kind: 'agent', name: 'old-bot', handle: 'old-bot', disabled: true };
});
afterAll(() => t.close());

describe('GET /api/v1/directory', () => {
  it('names the people and agents of the workspace to a member, and nothing more of them', async () => {
    // A member may not list principals: that is for agents:admin.
    expect((await t.request('GET', '/api/v1/agents', { token: member })).status).toBe(403);
    const page = await directory('?limit=100');
    expect(page.data).toEqual(expect.arrayContaining([lead, bot, retired]));
    for (const entry of page.data) expect(Object.keys(entry).sort()).toEqual(['disabled', 'handle', 'id', 'kind', 'name']);
  });

  it('names the ids asked for, in one call, and leaves out ids it does not know', async () => {
    const unknown = 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const page = await directory(`?ids=${lead.id},${bot.id},${unknown}`);
    expect(page.data.map((e) => e.id).sort()).toEqual([lead.id, bot.id].sort());
    expect((await t.request('GET', '/api/v1/directory?ids=tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV', { token: member })).json()).toMatchObject({ code: 'invalid_parameter' });
  });

  it('pages, newest first, and filters by kind', async () => {
    const first = await directory('?limit=2');
    expect(first.data).toHaveLength(2);
    expect(first.has_more).toBe(true);
    const second = await directory(`?limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`);
    expect(second.data.map((e) => e.id)).not.toContain(first.data[0]?.id);
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual([retired.id, bot.id, lead.id, second.data[1]?.id]);
    const agents = await directory('?kind=agent&limit=100');
    expect(agents.data.every((e) => e.kind === 'agent')).toBe(true);
    expect(agents.data.map((e) => e.id)).toEqual([retired.id, bot.id]);
  });

  it('finds the names that begin with a prefix, in any case, `_` standing for a space', async () => {
    const ids = async (query: string) => (await directory(query)).data.map((e) => e.id);
    expect(await ids('?prefix=ALICE_L')).toEqual([lead.id]);
    expect(await ids('?prefix=alice%20l')).toEqual([lead.id]);
    expect(await ids('?prefix=build-bot&kind=agent')).toEqual([bot.id]);
    expect(await ids('?prefix=build-bot&kind=human')).toEqual([]);
    // A prefix of the name only, not of a later word; wildcards are only characters.
    expect(await ids('?prefix=lead')).toEqual([]);
    expect(await ids('?prefix=%25')).toEqual([]);
    expect(await ids('?prefix=_')).toEqual([]);
    const emile = await created({ name: 'Émile Zola', scopes: ['tasks:read'] });
    expect(await ids(`?prefix=${encodeURIComponent('Émile_')}`)).toEqual([emile]);
    expect(await ids(`?prefix=${encodeURIComponent('Émile Zola')}`)).toEqual([emile]);
    expect(await ids(`?prefix=${encodeURIComponent('Émile Zolas')}`)).toEqual([]);
    const empty = await t.request('GET', '/api/v1/directory?prefix=', { token: member });
    expect(empty.status).toBe(400);
    expect(empty.json()).toMatchObject({ code: 'invalid_parameter' });
    // Pages through the principals it finds, as through the whole directory.
    const bots: string[] = [];
    for (const n of [1, 2, 3]) bots.push(await created({ name: `Relay Bot ${n}`, scopes: ['tasks:read'] }));
    const first = await directory('?prefix=relay_bot&limit=2');
    expect(first.has_more).toBe(true);
    const second = await directory(`?prefix=relay_bot&limit=2&cursor=${encodeURIComponent(first.next_cursor ?? '')}`);
    expect([...first.data, ...second.data].map((e) => e.id)).toEqual([...bots].reverse());
    expect(second.has_more).toBe(false);
  });

  it('gives a handle only where a mention names that principal alone', async () => {
    const twin = await created({ name: 'alice lead', scopes: ['tasks:read'] });
    const page = await directory(`?ids=${lead.id},${twin}`);
    expect(page.data.map((e) => e.handle)).toEqual([null, null]);
  });

  it('shows another workspace nothing of this one', async () => {
    const made = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Elsewhere' } });
    expect(made.status, made.body).toBe(201);
    const stranger = made.json<{ token: string }>().token;
    const page = await directory('?limit=100', stranger);
    // Only its own owner, made with it.
    expect(page.data).toHaveLength(1);
    expect(page.data.map((e) => e.id)).not.toContain(lead.id);
    expect((await directory(`?ids=${lead.id},${bot.id}`, stranger)).data).toEqual([]);
  });

  it('answers over GraphQL as over REST', async () => {
    const res = await graphql<{ directory: Page }>(t, `{ directory(ids: ["${bot.id}"]) { data { id kind name handle disabled } } }`, { token: member });
    expect(res.errors).toBeUndefined();
    expect(res.data?.directory.data).toEqual([bot]);
    const found = await graphql<{ directory: Page }>(t, '{ directory(prefix: "Build-Bot") { data { id } } }', { token: member });
    expect(found.data?.directory.data).toEqual([{ id: bot.id }]);
  });
});
