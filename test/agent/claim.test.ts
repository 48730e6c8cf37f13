import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { listen, outputOf } from '../mcp/clients.ts';
import { createTask } from '../rest/fixtures.ts';
import { AGENT_SCOPES, filled, mcpClient, type NextAction, offered, sendAction, toolCall } from './follow.ts';

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await listen(t);
});
afterAll(() => t.close());


interface ClaimedTask {
  id: string;
  description: string;
  artifacts: { id: string; href: string }[];
  next_actions: NextAction[];
}
interface ClaimAnswer {
  claims: { task: ClaimedTask; lease: { id: string } }[];
}

/** A task with the work in its description and a spec attached as an artifact, alone in its label's queue. */
async function taskWithWork(label: string): Promise<{ id: string; artifact: string }> {
  const task = await createTask(t, { title: 'Fix the flaky billing test', description: 'test/billing.test.ts fails one run in ten: find why, fix it.', labels: [label] });
  const res = await t.request('POST', '/api/v1/artifacts', { body: { content: '# Repro\nrun it 10 times', content_type: 'text/markdown', task_id: task.id } });
  expect(res.status, res.body).toBe(201);
  return { id: task.id, artifact: res.json<{ id: string }>().id };
}

describe('over REST', () => {
  it('the claim carries the description and the artifacts’ links; heartbeat and hand-in say what to do next', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const work = await taskWithWork('rest-claim');
    const second = await createTask(t, { title: 'more work', labels: ['rest-claim'], priority: 'low' });

    const claimed = await t.request('POST', '/api/v1/tasks/claim', { token: agent.token, body: { labels: ['rest-claim'] } });
    expect(claimed.status, claimed.body).toBe(200);
    const [claim] = claimed.json<ClaimAnswer>().claims;
    expect(claim?.task).toMatchObject({ id: work.id, description: 'test/billing.test.ts fails one run in ten: find why, fix it.' });
    const link = claim?.task.artifacts[0]?.href ?? '';
    expect(link).toBe(`/api/v1/artifacts/${work.artifact}/content`);
    const content = await t.request('GET', link, { token: agent.token });
    expect(content.status).toBe(200);
    expect(content.body).toContain('# Repro');

    // The heartbeat answer offers the next heartbeat and the hand-in.
    const beat = await sendAction(t, agent.token, offered(claim?.task.next_actions, 'leases_heartbeat'));
    expect(beat.status, beat.body).toBe(200);
    const beatActions = (JSON.parse(beat.body) as { next_actions: NextAction[] }).next_actions;
    expect(beatActions.map((a) => a.operation)).toEqual(['leases_heartbeat', 'tasks_hand_in']);

    // The hand-in asks for a summary, the one thing only the agent can write; the reviewer reads it as handoff.
    const handInAction = offered(beatActions, 'tasks_hand_in');
    expect(handInAction.fill).toEqual(['summary']);
    const handIn = await sendAction(t, agent.token, filled(handInAction, { summary: 'Fixed the race in the billing test; PR #12.' }));
    expect(handIn.status, handIn.body).toBe(200);
    const reviewed = JSON.parse(handIn.body) as { status: string; handoff: { summary: string }; next_actions: NextAction[] };
    expect(reviewed.status).toBe('in_review');
    expect(reviewed.handoff.summary).toBe('Fixed the race in the billing test; PR #12.');
    // The agent that handed it in is not offered its review.
    expect(reviewed.next_actions.map((a) => a.operation)).not.toContain('tasks_review');

    // A reviewer reading the task is offered approve and request-changes; following the latter sends the work back.
    const reviewer = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES, 'tasks:review'] });
    const inReview = (await t.request('GET', `/api/v1/tasks/${work.id}`, { token: reviewer.token })).json<{ next_actions: NextAction[] }>();
    const decisions = inReview.next_actions.filter((a) => a.operation === 'tasks_review');
    expect(decisions.map((a) => a.body?.decision)).toEqual(['approve', 'request_changes']);
    const [, requestChanges] = decisions;
    if (!requestChanges) throw new Error('no request_changes offered');
    expect(requestChanges.fill).toEqual(['comment']);
    const more = offered(reviewed.next_actions, 'tasks_claim_next');
    const next = await sendAction(t, agent.token, more);
    expect(next.status, next.body).toBe(200);
    expect((JSON.parse(next.body) as ClaimAnswer).claims[0]?.task.id).toBe(second.id);

    const sentBack = await sendAction(t, reviewer.token, filled(requestChanges, { comment: 'Add a regression test, please.' }));
    expect(sentBack.status, sentBack.body).toBe(200);
    expect(JSON.parse(sentBack.body)).toMatchObject({ status: 'in_progress', lease: { holder: { id: agent.id } } });
  });
});

describe.each(['1.x', 'v2'] as const)('over MCP with the %s client', (sdk) => {
  it('the same answers, each next action turned into a tool call by the documented rule', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const label = `mcp-claim-${sdk.replace('.', '')}`;
    const work = await taskWithWork(label);
    const second = await createTask(t, { title: 'more work', labels: [label], priority: 'low' });
    const client = await mcpClient(baseUrl, agent.token, sdk);
    const call = async <T>(action: NextAction): Promise<T> => {
      const { name, arguments: args } = toolCall(action);
      return outputOf<T>(await client.callTool(name, args));
    };

    const [claim] = outputOf<ClaimAnswer>(await client.callTool('tasks_claim_next', { labels: [label] })).claims;
    expect(claim?.task.id).toBe(work.id);
    expect(claim?.task.description).toContain('fails one run in ten');
    expect(claim?.task.artifacts[0]?.href).toBe(`/api/v1/artifacts/${work.artifact}/content`);
    const beat = await call<{ next_actions: NextAction[] }>(offered(claim?.task.next_actions, 'leases_heartbeat'));
    const reviewed = await call<{ status: string; handoff: { summary: string }; next_actions: NextAction[] }>(filled(offered(beat.next_actions, 'tasks_hand_in'), { summary: 'Fixed it.' }));
    expect(reviewed).toMatchObject({ status: 'in_review', handoff: { summary: 'Fixed it.' } });
    const next = await call<ClaimAnswer>(offered(reviewed.next_actions, 'tasks_claim_next'));
    // The offered claim_next has no labels: it takes the best todo task anywhere, and every earlier test claimed its own.
    expect(next.claims.map((c) => c.task.id)).toEqual([second.id]);
    await client.close();
  });
});
