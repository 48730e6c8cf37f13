import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf } from './clients.ts';
import { eventsSettled } from '../leases/instances.ts';

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());

describe('an agent works a task over MCP alone', () => {
  it('whoami, claim, heartbeat, move to in_review, read the events: no REST call', async () => {
    const human = await connectV2(baseUrl, t.adminToken, 'modern');
    const created = outputOf<{ id: string }>(await human.callTool({ name: 'tasks_create', arguments: { title: 'Fix the flaky test' } }));
    const agentToken = (await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] })).token;
    const agent = await connectV2(baseUrl, agentToken, 'modern');

    const me = outputOf<{ principal: { id: string; kind: string }; can: string[] }>(await agent.callTool({ name: 'whoami', arguments: {} }));
    expect(me.principal.kind).toBe('agent');
    expect(me.can).toEqual(expect.arrayContaining(['tasks_claim_next', 'leases_heartbeat', 'tasks_update', 'events_list']));
    // The cursor is taken once the human's task.created is readable: held back (another test's open transaction on a shared
    // PostgreSQL), it would come after the cursor and read as not the agent's.
    await eventsSettled(t);
    const before = outputOf<{ sync_cursor: string }>(await agent.callTool({ name: 'events_list', arguments: { limit: 1 } }));

    type Claim = { task: { id: string; status: string; version: number }; lease: { id: string } };
    const [claim] = outputOf<{ claims: Claim[] }>(await agent.callTool({ name: 'tasks_claim_next', arguments: {} })).claims;
    if (!claim) throw new Error('the queue had a task to claim');
    expect(claim.task).toMatchObject({ id: created.id, status: 'in_progress' });
    const beat = outputOf<{ id: string }>(await agent.callTool({ name: 'leases_heartbeat', arguments: { id: claim.lease.id, note: 'reproduced it' } }));
    expect(beat.id).toBe(claim.lease.id);
    const review = outputOf<{ status: string }>(
      await agent.callTool({ name: 'tasks_update', arguments: { id: created.id, status: 'in_review', expected_version: claim.task.version } }),
    );
    expect(review.status).toBe('in_review');

    // On a shared PostgreSQL another test's open transaction may hold the newest events back from cursors for a while.
    await eventsSettled(t);
    const events = outputOf<{ data: { type: string; subject: string; actor: { id: string } }[] }>(await agent.callTool({ name: 'events_list', arguments: { since: before.sync_cursor } }));
    expect(events.data.map((e) => e.type)).toEqual(expect.arrayContaining(['task.claimed', 'lease.renewed', 'task.status_changed']));
    // Every event about the task since the cursor is the agent's own (the server's workers may write others meanwhile).
    expect(events.data.filter((e) => e.subject === created.id).every((e) => e.actor.id === me.principal.id)).toBe(true);
    await agent.close();
    await human.close();
  });
});
