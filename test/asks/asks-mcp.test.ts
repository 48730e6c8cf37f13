import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf, problemOf } from '../mcp/clients.ts';

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

describe('asks over MCP, with the real client', () => {
  it('an agent asks with options and a deadline, waits; a human answers; the wait returns the answer', async () => {
    const humanPrincipal = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review', 'events:read'], name: 'carol' });
    const agentPrincipal = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    const human = await connectV2(baseUrl, humanPrincipal.token, 'modern');
    const agent = await connectV2(baseUrl, agentPrincipal.token, 'modern');
    const task = outputOf<{ id: string }>(await agent.callTool({ name: 'tasks_create', arguments: { title: 'Pick a region' } }));
    const start = outputOf<{ cursor: string }>(await agent.callTool({ name: 'wait', arguments: { timeout_s: 0, work: 'no' } }));
    const ask = outputOf<{ id: string; status: string }>(
      await agent.callTool({ name: 'asks_create', arguments: { id: task.id, question: 'Which region?', options: [{ label: 'eu' }, { label: 'us' }], to: 'carol', timeout_s: 300, default: { option: 'eu' } } }),
    );
    expect(ask.status).toBe('open');
    const inbox = outputOf<{ data: { kind: string; ref_id: string }[] }>(await human.callTool({ name: 'inbox_list', arguments: { state: ['unread'] } }));
    expect(inbox.data).toEqual([expect.objectContaining({ kind: 'ask', ref_id: ask.id })]);

    const waiting = agent.callTool({ name: 'wait', arguments: { after: start.cursor, timeout_s: 30, work: 'no' } });
    outputOf(await human.callTool({ name: 'asks_answer', arguments: { id: ask.id, option: 'us' } }));
    const woke = outputOf<{ items: { type: string; data: { answer?: { option?: string } } }[] }>(await waiting);
    expect(woke.items.map((i) => [i.type, i.data.answer?.option])).toEqual([['ask.answered', 'us']]);

    const again = problemOf(await human.callTool({ name: 'asks_answer', arguments: { id: ask.id, option: 'eu' } }));
    expect(again).toMatchObject({ code: 'ask_closed', ask_status: 'answered' });
    await agent.close();
    await human.close();
  });
});
