import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../graphql/client.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf } from '../mcp/clients.ts';
import { createTask } from '../rest/fixtures.ts';

let t: TestServer;
let agent: Principal;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'], name: 'cycler' });
  mcp = await connectV2(await listen(t), agent.token, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

interface Claimed {
  claims: { task: { id: string }; lease: { id: string } }[];
}

/** Two tasks under a label of their own, the first of them claimed by the agent. */
async function heldAndNext(label: string): Promise<{ leaseId: string; next: string }> {
  await createTask(t, { labels: [label], priority: 'high' });
  const next = await createTask(t, { labels: [label] });
  const res = await t.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: { labels: [label] } });
  const leaseId = res.json<Claimed>().claims[0]?.lease.id ?? '';
  return { leaseId, next: next.id };
}

describe('the one-call work cycle over MCP and GraphQL', () => {
  it('leases_cycle over MCP hands in and claims the next task; the same idempotency_key answers the same', async () => {
    const { leaseId, next } = await heldAndNext('cycle-mcp');
    const args = { id: leaseId, summary: 'Done over MCP.', labels: ['cycle-mcp'], idempotency_key: 'cycle-mcp-1' };
    const first = outputOf<Claimed & { ended: { task: { status: string } } }>(await mcp.callTool({ name: 'leases_cycle', arguments: args }));
    expect(first.ended.task.status).toBe('in_review');
    expect(first.claims.map((c) => c.task.id)).toEqual([next]);
    const again = outputOf(await mcp.callTool({ name: 'leases_cycle', arguments: args }));
    expect(again).toEqual(first);
  });

  it('cycleLeases over GraphQL ends a batch and claims the next', async () => {
    const { leaseId, next } = await heldAndNext('cycle-graphql');
    const res = await graphql<{ cycleLeases: { ended: { task: { status: string } }[]; claims: { task: { id: string } }[] } }>(
      t,
      'mutation ($leases: [LeasesCycleManyLeaseInput!]!) { cycleLeases(leases: $leases, labels: ["cycle-graphql"]) { ended { task { status } } claims { task { id } } } }',
      { variables: { leases: [{ id: leaseId, summary: 'Done over GraphQL.' }] }, token: agent.token },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data?.cycleLeases).toEqual({ ended: [{ task: { status: 'in_review' } }], claims: [{ task: { id: next } }] });
  });
});
