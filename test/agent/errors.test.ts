import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateToken } from '../../src/tokens.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, problemOf } from '../mcp/clients.ts';
import { mcpClient } from './follow.ts';
import { countRows, createTask, expectProblem } from '../rest/fixtures.ts';

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

const NO_TOKEN = 'Bearer realm="baton"';
const BAD_TOKEN = 'Bearer realm="baton", error="invalid_token"';

describe('every 401 carries WWW-Authenticate: Bearer', () => {
  // A well-formed token no server issued (unknown), and one that fails the checksum (malformed).
  const unknown = generateToken();
  const cases: [string, Record<string, string>, string][] = [
    ['no Authorization header', {}, NO_TOKEN],
    ['a header that is not Bearer', { authorization: 'Basic abc' }, NO_TOKEN],
    ['a malformed token', { authorization: 'Bearer bat_not-a-token' }, BAD_TOKEN],
    ['an unknown token', { authorization: `Bearer ${unknown}` }, BAD_TOKEN],
  ];

  it.each(cases)('REST, the manifest, MCP and GraphQL with %s', async (_name, headers, challenge) => {
    const requests = [
      { method: 'GET' as const, url: '/api/v1/tasks' },
      { method: 'GET' as const, url: '/api/v1/events/stream' },
      { method: 'POST' as const, url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } },
      { method: 'POST' as const, url: '/graphql', payload: { query: '{ whoami { scopes } }' } },
    ];
    if (headers.authorization) requests.push({ method: 'GET', url: '/api/v1' });
    for (const { method, url, payload } of requests) {
      const res = await t.app.inject({ method, url, headers: { ...headers, accept: 'application/json, text/event-stream', 'content-type': 'application/json' }, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(401);
      expect(res.headers['www-authenticate'], url).toBe(challenge);
    }
  });

  it('an MCP client refused at connect sees the 401 with its challenge', async () => {
    const res = await fetch(new URL('/mcp', baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${unknown}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(BAD_TOKEN);
    await expect(connectV2(baseUrl, unknown, 'modern')).rejects.toThrow();
  });
});

describe('a placeholder Idempotency-Key is refused', () => {
  const placeholders = ['<unique>', '<...>', '<uuid>', '', '   ', '...', '…', '{{uuid}}', '${IDEMPOTENCY_KEY}', '$(uuidgen)', 'YOUR_KEY_HERE', 'IDEMPOTENCY_KEY', 'q3Zr8V0kfj2LwX1a'];

  it.each(placeholders)('REST: %j is a 400 whose hint asks for a fresh unique value, and nothing is written', async (key) => {
    const before = await countRows(t);
    const problem = expectProblem(await t.request('POST', '/api/v1/tasks', { key, body: { title: 'copied a template' } }), 400, 'idempotency_key_required');
    expect(problem.hint).toMatch(/fresh unique value/);
    expect(problem.detail).toContain(JSON.stringify(key.trim()));
    expect(await countRows(t)).toEqual(before);
  });

  it('MCP: the same refusal as a tool error, through the 1.x and the v2 client', async () => {
    const clients = [await mcpClient(baseUrl, t.adminToken, '1.x'), await mcpClient(baseUrl, t.adminToken, 'v2')];
    for (const client of clients) {
      for (const key of ['<unique>', '', '{{uuid}}', 'YOUR_KEY_HERE']) {
        const result = await client.callTool('tasks_create', { title: 'copied a template', idempotency_key: key });
        const problem = problemOf(result);
        expect(problem).toMatchObject({ code: 'idempotency_key_required', status: 400 });
        expect(String(problem.hint)).toMatch(/fresh unique value/);
      }
      await client.close();
    }
  });
});

describe('next_actions carry a key made for the action, not a placeholder', () => {
  it('each write action has its own fresh key, and sending it as written succeeds', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const task = await createTask(t, { title: 'follow the offered claim' });
    type Action = { operation: string; method: string; href: string; headers: Record<string, string>; body?: unknown };
    const read = async () => (await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token })).json<{ next_actions: Action[] }>().next_actions;
    const [first, second] = [await read(), await read()];
    const claim = first.find((a) => a.operation === 'tasks_claim');
    if (!claim) throw new Error('a todo task offers its claim');
    const key = claim.headers['Idempotency-Key'] ?? '';
    expect(key).toMatch(/^[A-Za-z0-9_-]{16,}$/);
    expect(second.find((a) => a.operation === 'tasks_claim')?.headers['Idempotency-Key']).not.toBe(key);

    // Sent exactly as offered, key included: it claims.
    const res = await t.app.inject({ method: claim.method as 'POST', url: claim.href, headers: { authorization: `Bearer ${agent.token}`, 'content-type': 'application/json', ...claim.headers }, payload: JSON.stringify(claim.body ?? {}) });
    expect(res.statusCode, res.body).toBe(200);
  });
});
