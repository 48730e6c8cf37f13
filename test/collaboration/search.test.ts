import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../graphql/client.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf, problemOf } from '../mcp/clients.ts';
import { createTask, expectProblem } from '../rest/fixtures.ts';

interface Page {
  data: { id: string; title?: string; status?: string; description?: string }[];
  has_more: boolean;
  next_cursor: string | null;
}

let t: TestServer;
let agent: Principal;
let mcp: Client;
const ids: Record<string, string> = {};
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
  mcp = await connectV2(await listen(t), agent.token, 'modern');
  ids.title = (await createTask(t, { title: 'Fix the login redirect', labels: ['search'] })).id;
  ids.description = (await createTask(t, { title: 'Session cleanup', description: 'Users are sent back to the login page after logging in.', labels: ['search'] })).id;
  ids.comment = (await createTask(t, { title: 'Flaky checkout test', labels: ['search'] })).id;
  await t.request('POST', `/api/v1/tasks/${ids.comment}/comments`, { body: { body: 'Probably the same login cookie problem.' } });
  ids.unrelated = (await createTask(t, { title: 'Upgrade the database driver', labels: ['search'] })).id;
  ids.deleted = (await createTask(t, { title: 'Old login spike', labels: ['search'] })).id;
  await t.request('POST', `/api/v1/tasks/${ids.deleted}/comments`, { body: { body: 'login login login' } });
  await t.database.db.updateTable('tasks').set({ deleted_at: new Date() }).where('id', '=', ids.deleted).execute();
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const search = async (query: string) => {
  const res = await t.request('GET', `/api/v1/tasks?${query}`);
  expect(res.status, res.body).toBe(200);
  return res.json<Page>();
};

describe('search', () => {
  it('matches titles, descriptions and comments, stemmed, best match first (title over description over comment)', async () => {
    const page = await search('q=logins&labels=search');
    expect(page.data.map((task) => task.id)).toEqual([ids.title, ids.description, ids.comment]);
    // The same views and projections as any list.
    expect(Object.keys(page.data[0] ?? {})).toContain('legal_transitions');
    const projected = await search('q=login&labels=search&fields=title');
    expect(projected.data[0]).toEqual({ id: ids.title, title: 'Fix the login redirect', status: 'todo', version: 1 });
  });

  it('follows a task through its edits: a new title or description is found and the old words are not; a claim changes nothing', async () => {
    const task = await createTask(t, { title: 'Tune the aardvark cache', description: 'The zebra queue stalls.', labels: ['edits'] });
    const found = async (words: string) => (await search(`q=${words}&labels=edits`)).data.map((match) => match.id);
    expect(await found('aardvark')).toEqual([task.id]);
    const claim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} });
    expect(claim.status, claim.body).toBe(200);
    expect(await found('zebra')).toEqual([task.id]);
    const retitled = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Tune the pangolin cache' }, ifMatch: '"2"' });
    expect(retitled.status, retitled.body).toBe(200);
    expect(await found('aardvark')).toEqual([]);
    expect(await found('pangolin')).toEqual([task.id]);
    const redescribed = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { description: 'The okapi queue stalls.' }, ifMatch: '"3"' });
    expect(redescribed.status, redescribed.body).toBe(200);
    expect(await found('zebra')).toEqual([]);
    expect(await found('okapi')).toEqual([task.id]);
    expect(await found('pangolin')).toEqual([task.id]);
  });

  it('takes web-search syntax: "phrases", -excluded words, or; never a 500 on odd input', async () => {
    expect((await search(`q=${encodeURIComponent('"login redirect"')}&labels=search`)).data.map((task) => task.id)).toEqual([ids.title]);
    expect((await search(`q=${encodeURIComponent('login -cookie -redirect')}&labels=search`)).data.map((task) => task.id)).toEqual([ids.description]);
    expect((await search(`q=${encodeURIComponent('database or checkout')}&labels=search`)).data.map((task) => task.id).sort()).toEqual([ids.comment, ids.unrelated].sort());
    for (const odd of ['(((', 'login & | !', "o'brien:*", '"unclosed', '\\', 'login <-> ::']) {
      const res = await t.request('GET', `/api/v1/tasks?q=${encodeURIComponent(odd)}`);
      expect([200, 400], `${odd}: ${res.body}`).toContain(res.status);
    }
  });

  it('finds the last word by its start while it is typed (unquoted, not excluded), and only ever adds matches', async () => {
    const task = await createTask(t, { title: 'Provision the staging database', labels: ['typing'] });
    const other = await createTask(t, { title: 'Stage the release notes', labels: ['typing'] });
    const found = async (words: string) => (await search(`q=${encodeURIComponent(words)}&labels=typing`)).data.map((match) => match.id).sort();
    expect(await found('staging datab')).toEqual([task.id]);
    // "stag" is the start of "staging" (stemmed "stage") and of "Stage": both.
    expect(await found('stag')).toEqual([task.id, other.id].sort());
    // A word the text does not end with is whole: "stag" followed by a space, or inside a phrase, finds nothing.
    expect(await found('stag ')).toEqual([]);
    expect(await found('"staging datab')).toEqual([]);
    expect(await found('datab -stag')).toEqual([]);
    // What the words found whole, they still find.
    expect(await found('staging database')).toEqual([task.id]);
    expect(await found('database or release')).toEqual([task.id, other.id].sort());
  });

  it('a query with no searchable words is a 400 invalid_search naming q; an over-long one is refused too', async () => {
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks?q=${encodeURIComponent('the and (((')}`), 400, 'invalid_search');
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/q' })]);
    const long = expectProblem(await t.request('GET', `/api/v1/tasks?q=${'a'.repeat(201)}`), 400, 'invalid_parameter');
    expect(JSON.stringify(long.errors)).toContain('/q');
  });

  it('pages by rank then id with its own cursor: every match once, in order; a plain list cursor or another q\'s cursor is refused', async () => {
    const made: string[] = [];
    for (let i = 0; i < 7; i++) made.push((await createTask(t, { title: i % 2 === 0 ? 'paging widget widget' : 'paging widget', labels: ['paging'] })).id);
    const all = await search('q=widget&labels=paging&limit=100');
    expect(all.data).toHaveLength(7);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = await search(`q=widget&labels=paging&limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.data.map((task) => task.id));
      cursor = page.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.data.map((task) => task.id));
    // The two-word titles rank first; ties newest first.
    expect(seen.slice(0, 4)).toEqual(made.filter((_, i) => i % 2 === 0).reverse());

    const plain = await search('labels=paging&limit=1');
    expectProblem(await t.request('GET', `/api/v1/tasks?q=widget&cursor=${plain.next_cursor ?? ''}`), 400, 'invalid_parameter');
    const ranked = await search('q=widget&labels=paging&limit=1');
    expectProblem(await t.request('GET', `/api/v1/tasks?cursor=${ranked.next_cursor ?? ''}`), 400, 'invalid_parameter');
    // A rank belongs to its query: the cursor of one search is refused by another, never a silently wrong page.
    const other = expectProblem(await t.request('GET', `/api/v1/tasks?q=paging&labels=paging&cursor=${ranked.next_cursor ?? ''}`), 400, 'invalid_parameter');
    expect(other.errors).toEqual([expect.objectContaining({ pointer: '/cursor', detail: 'issued for a different q' })]);
    expect((await search(`q=widget&labels=paging&limit=1&cursor=${ranked.next_cursor ?? ''}`)).data).toHaveLength(1);
  });

  it('over MCP and GraphQL', async () => {
    const viaMcp = outputOf<Page>(await mcp.callTool({ name: 'tasks_list', arguments: { q: 'login redirect', labels: 'search' } }));
    expect(viaMcp.data.map((task) => task.id)).toEqual([ids.title]);
    expect(problemOf(await mcp.callTool({ name: 'tasks_list', arguments: { q: 'the' } }))).toMatchObject({ code: 'invalid_search', status: 400 });
    const viaGraphql = await graphql<{ tasks: { data: { id: string }[] } }>(t, 'query ($q: String) { tasks(q: $q, labels: "search") { data { id } } }', { variables: { q: 'cookie' } });
    expect(viaGraphql.errors, JSON.stringify(viaGraphql.errors)).toBeUndefined();
    expect(viaGraphql.data?.tasks.data).toEqual([{ id: ids.comment }]);
  });
});
