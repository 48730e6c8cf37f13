import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { AGENT_SCOPES } from '../agent/follow.ts';
import { connectV1, listen, outputOf } from './clients.ts';
import { anthropicIssues, openAiStrictIssues } from './strict-schemas.ts';

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

async function connect(token: string, query: string): Promise<Client> {
  const client = new Client({ name: 'strict-host', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp?${query}`, baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('the checkers', () => {
  it('find what each vendor refuses in a plain schema, and nothing in a strict one', () => {
    const plain = { type: 'object', properties: { title: { type: 'string', minLength: 1 }, due: { type: 'string', format: 'uri' } }, required: ['title'] };
    expect(openAiStrictIssues(plain)).toEqual(['/: additionalProperties is not false', '/due: not in required', '/title: unsupported keyword minLength', '/due: unsupported format uri']);
    expect(anthropicIssues({ name: 'tasks.create', inputSchema: plain }, true)).toEqual(['name tasks.create does not match ^[a-zA-Z0-9_-]{1,64}$', '/: additionalProperties is not false', '/title: minLength is refused in strict mode']);
    expect(openAiStrictIssues({ anyOf: [{ type: 'object', additionalProperties: false }] })).toEqual(['/: the root is not an object', '/: anyOf at the root']);
    const strict = { type: 'object', properties: { title: { type: 'string' }, due: { type: ['string', 'null'], format: 'date-time' } }, required: ['title', 'due'], additionalProperties: false };
    expect(openAiStrictIssues(strict)).toEqual([]);
    expect(anthropicIssues({ name: 'tasks_create', inputSchema: strict }, true)).toEqual([]);
  });
});

describe('?schemas=strict', () => {
  it.each(['an agent', 'a human admin'] as const)('lists every tool %s may call with an input schema OpenAI\'s strict mode and Anthropic\'s rules accept; the default stays as it was', async (who) => {
    const token = who === 'an agent' ? (await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] })).token : t.adminToken;
    const strict = await connect(token, 'toolsets=all&schemas=strict');
    const loose = await connect(token, 'toolsets=all');
    const strictTools = (await strict.listTools()).tools;
    const looseTools = new Map((await loose.listTools()).tools.map((tool) => [tool.name, tool]));
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    expect(strictTools.map((tool) => tool.name)).toEqual([...looseTools.keys()]);
    for (const tool of strictTools) {
      const schema = tool.inputSchema as Record<string, unknown>;
      expect(openAiStrictIssues(schema), tool.name).toEqual([]);
      expect(anthropicIssues({ name: tool.name, inputSchema: schema }, true), tool.name).toEqual([]);
      expect(() => ajv.compile(schema), tool.name).not.toThrow();
      // The same members as the loose schema, which Anthropic's (non-strict) rules take as well.
      const plain = looseTools.get(tool.name);
      expect(Object.keys(schema['properties'] as object), tool.name).toEqual(Object.keys(plain?.inputSchema.properties ?? {}));
      expect(anthropicIssues({ name: tool.name, inputSchema: plain?.inputSchema as Record<string, unknown> }, false), tool.name).toEqual([]);
    }
    // Today's schemas by default: optional members stay optional.
    expect(looseTools.get('tasks_create')?.inputSchema.required).toEqual(['title']);
    const size = (tools: unknown) => Buffer.byteLength(JSON.stringify({ tools }));
    console.log(`[budget] tools/list, ${who}, every set: loose ${size([...looseTools.values()])} bytes, strict ${size(strictTools)} bytes (no budget)`);
    await strict.close();
    await loose.close();
  });

  it('takes null for a member left out and "none" to clear one, and the default listing\'s callers keep null as clear', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const client = await connect(agent.token, 'schemas=strict');
    const tools = (await client.listTools()).tools;
    const create = tools.find((tool) => tool.name === 'tasks_create');
    const members = Object.keys(create?.inputSchema.properties ?? {});
    // A strict host sends every member: null for each it leaves out.
    const nulls = (names: string[], given: Record<string, unknown>) => ({ ...Object.fromEntries(names.map((name) => [name, null])), ...given });
    const parent = outputOf<{ id: string }>(await client.callTool({ name: 'tasks_create', arguments: nulls(members, { title: 'strict parent' }) }));
    const child = outputOf<{ id: string; parent_id: string | null; labels: string[]; priority: string }>(
      await client.callTool({ name: 'tasks_create', arguments: nulls(members, { title: 'strict child', parent_id: parent.id, due_at: '2027-01-15T17:00:00Z' }) }),
    );
    const read = async (id: string) => (await t.request('GET', `/api/v1/tasks/${id}?view=full`)).json<{ parent_id: string | null; due_at: string | null; title: string }>();
    expect(child).toMatchObject({ labels: [], priority: 'normal' });
    expect(await read(child.id)).toMatchObject({ parent_id: parent.id, due_at: '2027-01-15T17:00:00.000Z' });
    const update = Object.keys(tools.find((tool) => tool.name === 'tasks_update')?.inputSchema.properties ?? {});
    // null leaves the parent as it is; "none" clears it.
    outputOf(await client.callTool({ name: 'tasks_update', arguments: nulls(update, { id: child.id, title: 'renamed' }) }));
    expect(await read(child.id)).toMatchObject({ parent_id: parent.id, title: 'renamed' });
    outputOf(await client.callTool({ name: 'tasks_update', arguments: nulls(update, { id: child.id, parent_id: 'none', due_at: 'none' }) }));
    expect(await read(child.id)).toMatchObject({ parent_id: null, due_at: null });
    await client.close();
    // Without ?schemas=strict, null means what it always meant: clear.
    const v1 = await connectV1(baseUrl, agent.token);
    outputOf(await v1.callTool({ name: 'tasks_update', arguments: { id: child.id, parent_id: parent.id, due_at: '2027-01-15T17:00:00Z' } }));
    expect(await read(child.id)).toMatchObject({ parent_id: parent.id });
    outputOf(await v1.callTool({ name: 'tasks_update', arguments: { id: child.id, parent_id: null, due_at: null } }));
    expect(await read(child.id)).toMatchObject({ parent_id: null, due_at: null });
    await v1.close();
  });
});
