import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask, expectProblem } from '../rest/fixtures.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

/** An agent made over REST with the given allowlist, and a token for it. */
async function agentWith(toolAllowlist: string[]): Promise<string> {
  const agent = await t.request('POST', '/api/v1/agents', { body: { name: `allow-${toolAllowlist.join('-')}`, scopes: ['tasks:read'], tool_allowlist: toolAllowlist } });
  expect(agent.status, agent.body).toBe(201);
  const token = await t.request('POST', `/api/v1/agents/${agent.json<{ id: string }>().id}/tokens`, { body: { machine: 'm' } });
  expect(token.status, token.body).toBe(201);
  return token.json<{ token: string }>().token;
}

describe('toolAllowlist entries', () => {
  // The dotted form of an operation name: the alias kept for one minor version (spec/api.md).
  const dotted = 'tasks_get'.replace('_', '.');
  const portable = 'tasks_get'.replaceAll('.', '_');

  it.each([dotted, portable])('%s admits the operation, and nothing else', async (entry) => {
    const token = await agentWith([entry]);
    const task = await createTask(t);
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token })).status).toBe(200);
    expectProblem(await t.request('GET', '/api/v1/tasks', { token }), 403, 'tool_not_allowed');
    const me = (await t.request('GET', '/api/v1/whoami', { token })).json<{ can: string[] }>();
    expect(me.can).toContain('tasks_get');
  });

  it('names no operation when misspelt in either form', async () => {
    for (const entry of ['tasks.gett', 'tasks_gett']) {
      expectProblem(await t.request('POST', '/api/v1/agents', { body: { name: 'typo', scopes: ['tasks:read'], tool_allowlist: [entry] } }), 400, 'validation_failed');
    }
  });
});
