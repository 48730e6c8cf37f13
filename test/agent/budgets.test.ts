import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveTools, listToolsFor } from '../../src/adapters/mcp/tools.ts';
import { jsonSchemas } from '../../src/adapters/json-schema.ts';
import { DEFAULT_TOOLSETS, toolsetOf } from '../../src/adapters/mcp/toolsets.ts';
import { SCOPES, type Scope } from '../../src/domain/scopes.ts';
import { isCallable, type Operation, TOOLSETS, type Toolset } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import type { Authenticated } from '../../src/service/authenticate.ts';
import { startTestServer, testConfig, type TestServer } from '../harness.ts';
import { connectV1, connectV2, listen, outputOf, type ToolResult } from '../mcp/clients.ts';
import { createTask } from '../rest/fixtures.ts';
import { PLANNED_OPERATIONS } from './planned-operations.ts';
import type { NextActionV2 } from '../../src/operations/tasks/v2-answer.ts';
import { AGENT_SCOPES, filled, mcpClient, type NextAction, offered, sendAction, toolCall } from './follow.ts';

/**
 * The context an agent spends on Baton, in bytes of response bodies. Sizes are deterministic (fixed
 * id, key and time lengths), so these are tests, not benchmarks; each prints what it measured.
 */
const BUDGET = {
  toolsList: 26 * 1024,
  toolsListHuman: 40 * 1024,
  manifest: 3 * 1024,
  inProgressTask: 900,
  loop: 8 * 1024,
  loopCalls: 5,
  // A realistic task (below) in v1's default view, every documented field and action shape kept: issue 38 asks
  // 900, 1,000 and 200 bytes, which only a v2 shape reaches (spec/api.md, "Context budgets"); these hold v1's floor.
  realisticTask: 1600,
  realisticClaim: 2100,
  twoActions: 400,
  // Issue 38's figures, met by v2's default view (/api/v2: spec/api.md, "Versions").
  v2Task: 900,
  v2ClaimedTask: 1000,
  twoActionsV2: 200,
} as const;

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

const bytes = (text: string) => Buffer.byteLength(text);
const report = (what: string, size: number, budget: number) => console.log(`[budget] ${what}: ${size} bytes (budget ${budget})`);

/** A realistic piece of work, alone in its label so a claim takes exactly it. */
const work = (label: string) =>
  createTask(t, { title: 'Fix the flaky test in the billing suite', description: 'test/billing.test.ts fails one run in ten: find why, fix it.', labels: [label] });

/**
 * The agent's default tool set, `work`: its loop, and nothing else. An operation joins it only by a
 * decision (`toolset: 'work'` in its file, and a line here): each costs every agent's context.
 */
const WORK_SET = [
  'whoami', 'tasks_claim_next', 'tasks_claim', 'tasks_get', 'tasks_list', 'tasks_create', 'tasks_update', 'tasks_hand_in',
  'leases_heartbeat', 'leases_release', 'leases_cycle', 'leases_list', 'artifacts_create', 'comments_create',
  // Issues 39–41: ask, wait, hold a resource, report a run.
  'asks_create', 'wait', 'reservations_acquire', 'reservations_release', 'runs_usage', 'runs_log',
  // asks_create's answer says to wait for the answer with asks_get (`wait_s`): an agent must find it listed.
  'asks_get',
];

/** Headroom today under each budget, for what the open issues add beyond the stand-ins (issue 38). */
// The human figure was 8 KB before asks, reservations and runs landed, 7 KB before tasks that require
// reservations, and 6 KB before reservations on tasks_update and max_cost; export landed in the admin
// set, and workspaces, still open, will too: outside the default.
const HEADROOM = { agent: 5 * 1024, human: 5 * 1024 } as const;

const principalOf = (kind: 'agent' | 'human', scopes: readonly Scope[]): Authenticated => ({
  principal: { id: `${kind}_budget`, kind, name: kind, scopes: new Set(scopes), toolAllowlist: null, tokenId: 'tok_budget', machine: 'test', workspaceId: 'wsp_00000000000000000000000000' },
  budget: { limit: 1, remaining: 1, windowS: 1, resetS: 1 },
});
const AGENT = principalOf('agent', AGENT_SCOPES);
const ADMIN = principalOf('human', SCOPES);

/** The bytes of a tools/list result for a caller over some operations, as the wire carries it (checked against the server below). */
function listingSize(ops: readonly Operation[], caller: Authenticated, toolsets: readonly Toolset[], schemas: 'loose' | 'strict' = 'loose') {
  const tools = listToolsFor(deriveTools(ops, jsonSchemas(testConfig())), caller, { toolsets: new Set(toolsets), outputSchemas: false, schemas, apiVersion: 1 });
  return { size: bytes(JSON.stringify({ tools })), names: tools.map((tool) => tool.name) };
}
const registered = new Set(operations.map((op) => op.name));
const withPlanned = [...operations, ...PLANNED_OPERATIONS.filter((op) => !registered.has(op.name))];

describe('tools/list', () => {
  it('for a human admin, by default the work and tasks sets, is at most 40 KB, 5 KB under it today', async () => {
    const client = await connectV1(baseUrl, t.adminToken);
    const listed = await client.listTools();
    const size = bytes(JSON.stringify(listed));
    report('tools/list, human admin, default sets (work, tasks)', size, BUDGET.toolsListHuman - HEADROOM.human);
    expect(size).toBeLessThanOrEqual(BUDGET.toolsListHuman - HEADROOM.human);
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(operations.filter((op) => isCallable(op) && DEFAULT_TOOLSETS.human.includes(toolsetOf(op))).map((op) => op.name).sort());
    expect(listingSize(operations, ADMIN, DEFAULT_TOOLSETS.human).size).toBe(size);
    await client.close();
  });

  it.each(['1.x', 'v2'] as const)('for an agent token is at most 26 KB by default, 5 KB under it today, through the %s client', async (sdk) => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const client = sdk === 'v2' ? await connectV2(baseUrl, agent.token, 'modern') : await connectV1(baseUrl, agent.token);
    const listed = await client.listTools();
    const size = bytes(JSON.stringify(listed));
    report(`tools/list, agent token, default set work (${sdk} client)`, size, BUDGET.toolsList - HEADROOM.agent);
    expect(size).toBeLessThanOrEqual(BUDGET.toolsList - HEADROOM.agent);
    expect(listed.tools.map((tool) => tool.name)).toEqual(expect.arrayContaining(['whoami', 'tasks_claim_next', 'leases_heartbeat', 'tasks_update']));
    expect(listed.tools.map((tool) => tool.name)).not.toContain('webhooks_create');
    // The 1.x client hands back the listing as the wire carried it (the v2 client adds members).
    if (sdk === '1.x') expect(listingSize(operations, AGENT, DEFAULT_TOOLSETS.agent).size).toBe(size);
    await client.close();
  });

  it('holds its members to the reviewed work set: a new operation joins every agent\'s default only by a decision', () => {
    const work = withPlanned.filter((op) => toolsetOf(op) === 'work').map((op) => op.name);
    expect(work.sort()).toEqual([...WORK_SET].sort());
  });

  it('stays within both budgets with the operations the open issues add (stand-ins where not yet registered)', () => {
    const agent = listingSize(withPlanned, AGENT, DEFAULT_TOOLSETS.agent);
    const human = listingSize(withPlanned, ADMIN, DEFAULT_TOOLSETS.human);
    const all = listingSize(withPlanned, ADMIN, TOOLSETS);
    report(`tools/list, agent default with ${withPlanned.length - operations.length} planned operations`, agent.size, BUDGET.toolsList);
    report('tools/list, human admin default with them', human.size, BUDGET.toolsListHuman);
    console.log(`[budget] tools/list, human admin, every set with them: ${all.size} bytes (no budget)`);
    expect(agent.size).toBeLessThanOrEqual(BUDGET.toolsList);
    expect(human.size).toBeLessThanOrEqual(BUDGET.toolsListHuman);
    expect(all.names).toHaveLength(withPlanned.filter(isCallable).length);
  });
});

describe('tool sets', () => {
  const list = async (token: string, query: string) => {
    const client = new Client({ name: 'toolsets', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`/mcp?${query}`, baseUrl), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    const { tools } = await client.listTools();
    await client.close();
    return tools;
  };

  it('?toolsets=work,tasks,admin (or all; agent is work,tasks) lists every tool the caller may ever call, ?output_schemas=1 adds output schemas', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const every = operations.filter(isCallable).map((op) => op.name).sort();
    const agents = operations.filter((op) => isCallable(op) && op.humanOnly !== true).map((op) => op.name).sort();
    expect((await list(agent.token, 'toolsets=work,tasks,admin')).map((tool) => tool.name).sort()).toEqual(agents);
    expect((await list(agent.token, 'toolsets=all')).map((tool) => tool.name).sort()).toEqual(agents);
    expect((await list(agent.token, 'toolsets=agent,admin')).map((tool) => tool.name).sort()).toEqual(agents);
    expect((await list(t.adminToken, 'toolsets=all')).map((tool) => tool.name).sort()).toEqual(every);
    const admin = await list(agent.token, 'toolsets=admin');
    expect(admin.map((tool) => tool.name)).toContain('webhooks_create');
    expect(admin.map((tool) => tool.name)).not.toContain('tasks_claim_next');
    const tasks = await list(agent.token, 'toolsets=tasks');
    expect(tasks.map((tool) => tool.name)).toEqual(expect.arrayContaining(['events_list', 'comments_list']));
    expect(tasks.map((tool) => tool.name)).not.toContain('tasks_claim_next');
    const withSchemas = await list(agent.token, 'output_schemas=1');
    for (const tool of withSchemas) expect(tool.outputSchema?.type, tool.name).toBe('object');
    console.log(`[budget] tools/list, agent token, default tool set with output schemas: ${bytes(JSON.stringify({ tools: withSchemas }))} bytes (no budget)`);
  });

  it('leave a tool that is not listed callable by name', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const client = await connectV2(baseUrl, agent.token, 'modern');
    expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain('events_list');
    const page = outputOf<{ data: unknown[] }>(await client.callTool({ name: 'events_list', arguments: { limit: 1 } }));
    expect(Array.isArray(page.data)).toBe(true);
    await client.close();
  });

  it('refuses an unknown tool set, or schema mode, with a 400 problem', async () => {
    for (const query of ['toolsets=agent,everything', 'schemas=tight']) {
      const res = await t.app.inject({ method: 'POST', url: `/mcp?${query}`, headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
      expect(res.statusCode, query).toBe(400);
      expect(res.json(), query).toMatchObject({ code: 'invalid_parameter' });
    }
  });
});

describe('tool results', () => {
  it.each(['1.x', 'v2'] as const)('carry the JSON once, as structuredContent, with one short text line (%s client)', async (sdk) => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const client = await mcpClient(baseUrl, agent.token, sdk);
    // A write that leaves no todo task behind (the loops below claim the only one there is).
    const result = await client.callTool('artifacts_create', { content: 'the JSON is carried once' });
    const output = outputOf<{ id: string }>(result);
    const texts = (result.content as { type: string; text: string }[]).map((block) => block.text);
    expect(texts).toHaveLength(1);
    expect(texts[0]).not.toContain(output.id);
    expect(texts[0]).toMatch(/^artifacts_create succeeded: \d+ bytes of JSON in structuredContent\. idempotency_key: \S+$/);
    await client.close();
  });
});

describe('the manifest', () => {
  it('names in both views the features an agent may use, each by an operation and members the registry has', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const inputs = new Map(operations.map((op) => [op.name, Object.keys(op.input.shape)]));
    for (const view of ['compact', 'full']) {
      const { features, operations: listed } = (await t.request('GET', `/api/v1?view=${view}`, { token: agent.token })).json<{ features: Record<string, string>; operations: unknown }>();
      expect(Object.keys(features)).toEqual(['search', 'subtasks', 'scheduling', 'attempts', 'dead_letter', 'stream']);
      const text = Object.values(features).join(' ');
      // Each capability is named by its operation and the members that carry it, as the registry has them.
      for (const [op, members] of [['tasks_list', ['q', 'parent', 'blocked_reason']], ['tasks_create', ['parent_id', 'not_before', 'due_at', 'max_attempts']], ['leases_release', ['outcome', 'reason']]] as const) {
        expect(text).toContain(op);
        for (const member of members) {
          expect(inputs.get(op), `${op} ${member}`).toContain(member);
          expect(text).toContain(member);
        }
      }
      expect(text).toContain('events_stream');
      // The stream is an operation of both views too.
      expect(JSON.stringify(listed)).toContain('/api/v1/events/stream');
    }
  });

  it('for an agent token is at most 3 KB by default; the full catalogue is a link away', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const compact = await t.request('GET', '/api/v1', { token: agent.token });
    // It lists the operations of the default tool sets, so of the planned ones only those joining `work` add to it.
    const planned = withPlanned.filter((op) => !registered.has(op.name) && toolsetOf(op) === 'work');
    const growth = planned.reduce((sum, op) => sum + bytes(`,${JSON.stringify(op.name)}:${JSON.stringify(`${op.http.method} /api/v1${op.http.path}`)}`), 0);
    report('GET /api/v1, agent token (compact)', bytes(compact.body), BUDGET.manifest);
    report(`GET /api/v1, agent token (compact), with the ${planned.length} planned work operations`, bytes(compact.body) + growth, BUDGET.manifest);
    expect(bytes(compact.body) + growth).toBeLessThanOrEqual(BUDGET.manifest);
    const manifest = compact.json<{ links: { full: string }; operations: Record<string, string>; mcp: { toolsets: string } }>();
    expect(manifest.operations['tasks_claim_next']).toBe('POST /api/v1/tasks/claim');
    // The default tool set's operations, the stream, and how to reach the rest.
    expect(Object.keys(manifest.operations).sort()).toEqual([...operations.filter((op) => registered.has(op.name) && WORK_SET.includes(op.name)).map((op) => op.name), 'events_stream'].sort());
    expect(manifest.mcp.toolsets).toContain('?toolsets=');
    const full = await t.request('GET', manifest.links.full, { token: agent.token });
    expect(full.status).toBe(200);
    console.log(`[budget] GET /api/v1?view=full, agent token: ${bytes(full.body)} bytes (no budget)`);
    expect(full.json<{ operations: { name: string; summary: string }[] }>().operations.find((op) => op.name === 'webhooks_create')?.summary).toBeTruthy();
  });
});

/**
 * A realistic task in progress, not a fixture: a 200-character title, five labels, a parent, a due
 * date, two artifacts and a lease (issue 38). Answers what the holder reads: the claim and the task.
 */
async function realisticWork(label: string, token: string, prefix = '/api/v1') {
  // The parent is not claimable for centuries: the loops below claim whatever todo task comes first.
  const parent = await createTask(t, { title: 'Billing reliability', not_before: '2999-01-01T00:00:00Z' });
  const title = 'Fix the flaky test in the billing suite: test/billing.test.ts fails one run in ten with a timeout in the invoice retry path; find the race, fix it, add a regression test and link the PR'.padEnd(200, '.');
  const labels = [label, 'billing', 'flaky-test', 'priority:high', 'team/payments'];
  const task = await createTask(t, { title, description: 'See the two attached logs.', labels, parent_id: parent.id, due_at: '2027-01-15T17:00:00Z' });
  for (const n of [1, 2]) {
    const res = await t.request('POST', '/api/v1/artifacts', { body: { content: `run ${n}: timeout in invoice retry`, task_id: task.id, name: `run-${n}.log` } });
    expect(res.status, res.body).toBe(201);
  }
  const claim = await t.request('POST', `${prefix}/tasks/${task.id}/claim`, { token, body: {} });
  expect(claim.status, claim.body).toBe(200);
  const read = await t.request('GET', `${prefix}/tasks/${task.id}`, { token });
  const shown = read.json<{ title: string; labels: string[]; artifacts: unknown[] }>();
  expect(shown.title).toHaveLength(200);
  expect(shown.labels).toEqual(labels);
  expect(shown.artifacts).toHaveLength(2);
  return { id: task.id, claim: claim.body, read: read.body };
}

describe('a realistic in-progress task', () => {
  it('over REST: the task, the claim and its two next actions stay within v1\'s floor', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const { claim, read } = await realisticWork('realistic-rest', agent.token);
    const actions = JSON.stringify((JSON.parse(read) as { next_actions: NextAction[] }).next_actions);
    report('GET /api/v1/tasks/{id}, realistic, the holder (compact)', bytes(read), BUDGET.realisticTask);
    report('POST /api/v1/tasks/{id}/claim, realistic', bytes(claim), BUDGET.realisticClaim);
    report('its next_actions (heartbeat, hand-in)', bytes(actions), BUDGET.twoActions);
    expect(bytes(read)).toBeLessThanOrEqual(BUDGET.realisticTask);
    expect(bytes(claim)).toBeLessThanOrEqual(BUDGET.realisticClaim);
    expect(bytes(actions)).toBeLessThanOrEqual(BUDGET.twoActions);
  });

  it('over REST v2: the task is at most 900 bytes, inside its claim 1,000, its two next actions 200', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const { claim, read } = await realisticWork('realistic-v2', agent.token, '/api/v2');
    const task = JSON.parse(read) as { next_actions: NextActionV2[]; artifacts: unknown[] };
    const claimed = JSON.stringify((JSON.parse(claim) as { task: unknown }).task);
    const actions = JSON.stringify(task.next_actions);
    report('GET /api/v2/tasks/{id}, realistic, the holder (default view)', bytes(read), BUDGET.v2Task);
    report('its task inside POST /api/v2/tasks/{id}/claim', bytes(claimed), BUDGET.v2ClaimedTask);
    report('its v2 next_actions (heartbeat, hand-in)', bytes(actions), BUDGET.twoActionsV2);
    expect(bytes(read)).toBeLessThanOrEqual(BUDGET.v2Task);
    expect(bytes(claimed)).toBeLessThanOrEqual(BUDGET.v2ClaimedTask);
    expect(bytes(actions)).toBeLessThanOrEqual(BUDGET.twoActionsV2);
    // Still ready to send: the operation (its id the task's lease's, or the task's own), a fresh key each, what to fill in.
    expect(task.next_actions.map(({ key: _key, ...action }) => action)).toEqual([
      { operation: 'leases_heartbeat' },
      { operation: 'tasks_hand_in', args: { lease_epoch: 1 }, fill: ['summary'] },
    ]);
    expect(task.next_actions.map((action) => action.key)).toEqual([expect.stringMatching(/^[\w-]{16}$/), expect.stringMatching(/^[\w-]{16}$/)]);
    expect(task.artifacts).toHaveLength(2);
  });

  it('over MCP with api=v2: tasks_get answers v2\'s bytes, at most 900', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const { id } = await realisticWork('realistic-mcp-v2', agent.token);
    const client = await connectV2(baseUrl, agent.token, 'modern', 'api=v2');
    try {
      const size = bytes(JSON.stringify(outputOf(await client.callTool({ name: 'tasks_get', arguments: { id } }))));
      report('tasks_get structuredContent, /mcp?api=v2, realistic, the holder', size, BUDGET.v2Task);
      expect(size).toBeLessThanOrEqual(BUDGET.v2Task);
    } finally {
      await client.close();
    }
  });

  it('over MCP: tasks_get answers the same bytes of JSON', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const { id } = await realisticWork('realistic-mcp', agent.token);
    const client = await mcpClient(baseUrl, agent.token, 'v2');
    const got = await client.callTool('tasks_get', { id });
    const size = bytes(JSON.stringify(outputOf(got)));
    report('tasks_get structuredContent, realistic, the holder', size, BUDGET.realisticTask);
    expect(size).toBeLessThanOrEqual(BUDGET.realisticTask);
    await client.close();
  });
});

describe('an in-progress task', () => {
  it('is at most 900 bytes, next_actions included, in its compact view', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await work('in-progress-size');
    const claimed = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} });
    expect(claimed.status, claimed.body).toBe(200);
    const read = await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token });
    report('GET /api/v1/tasks/{id}, in progress, the holder (compact, next_actions included)', bytes(read.body), BUDGET.inProgressTask);
    expect(bytes(read.body)).toBeLessThanOrEqual(BUDGET.inProgressTask);
    expect(read.json<{ next_actions: NextAction[] }>().next_actions.map((a) => a.operation)).toEqual(['leases_heartbeat', 'tasks_hand_in']);
  });
});

describe('the loop manifest → claim → heartbeat → hand in for review, following only what responses say', () => {
  it('reads at most 8 KB in at most 5 calls over REST', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await work('loop-rest');
    const read: number[] = [];
    const manifest = await t.request('GET', '/api/v1', { token: agent.token });
    read.push(bytes(manifest.body));
    const claim = await sendAction(t, agent.token, offered(manifest.json<{ next_actions: NextAction[] }>().next_actions, 'tasks_claim_next'));
    read.push(bytes(claim.body));
    const [claimed] = (JSON.parse(claim.body) as { claims: { task: { id: string; next_actions: NextAction[] } }[] }).claims;
    expect(claimed?.task.id).toBe(task.id);
    const beat = await sendAction(t, agent.token, offered(claimed?.task.next_actions, 'leases_heartbeat'));
    read.push(bytes(beat.body));
    const handIn = await sendAction(t, agent.token, filled(offered((JSON.parse(beat.body) as { next_actions: NextAction[] }).next_actions, 'tasks_hand_in'), { summary: 'Fixed the flaky test.' }));
    read.push(bytes(handIn.body));
    expect(JSON.parse(handIn.body)).toMatchObject({ id: task.id, status: 'in_review' });
    const total = read.reduce((a, b) => a + b, 0);
    report(`REST loop in ${read.length} calls (${read.join(' + ')})`, total, BUDGET.loop);
    expect(read.length).toBeLessThanOrEqual(BUDGET.loopCalls);
    expect(total).toBeLessThanOrEqual(BUDGET.loop);
  });

  it.each(['1.x', 'v2'] as const)('reads at most 8 KB in at most 5 tool calls over MCP (%s client; tools/list counted apart)', async (sdk) => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await work(`loop-mcp-${sdk.replace('.', '')}`);
    const client = await mcpClient(baseUrl, agent.token, sdk);
    const read: number[] = [];
    const call = async <T>(name: string, args: Record<string, unknown>): Promise<T> => {
      const result: ToolResult = await client.callTool(name, args);
      read.push(bytes(JSON.stringify(result)));
      return outputOf<T>(result);
    };
    const follow = <T>(action: NextAction) => call<T>(toolCall(action).name, toolCall(action).arguments);
    // The server's instructions and the tool list name the start: claim the next task.
    const { claims } = await call<{ claims: { task: { id: string; next_actions: NextAction[] } }[] }>('tasks_claim_next', {});
    expect(claims[0]?.task.id).toBe(task.id);
    const beat = await follow<{ next_actions: NextAction[] }>(offered(claims[0]?.task.next_actions, 'leases_heartbeat'));
    const reviewed = await follow<{ id: string; status: string }>(filled(offered(beat.next_actions, 'tasks_hand_in'), { summary: 'Fixed the flaky test.' }));
    expect(reviewed).toMatchObject({ id: task.id, status: 'in_review' });
    const total = read.reduce((a, b) => a + b, 0);
    report(`MCP loop in ${read.length} tool calls, ${sdk} client (${read.join(' + ')})`, total, BUDGET.loop);
    expect(read.length).toBeLessThanOrEqual(BUDGET.loopCalls);
    expect(total).toBeLessThanOrEqual(BUDGET.loop);
    await client.close();
  });
});
