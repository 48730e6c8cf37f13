import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../graphql/client.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { connectV2, listen, outputOf, problemOf } from '../mcp/clients.ts';
import { subscribe } from '../realtime/sse-client.ts';
import { createTask } from '../rest/fixtures.ts';

let t: TestServer;
let baseUrl: string;
let agent: Principal;
let mcp: Client;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  baseUrl = await listen(t);
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'], name: 'mcp-agent' });
  mcp = await connectV2(baseUrl, agent.token, 'modern');
});
afterAll(async () => {
  await mcp.close();
  await t.close();
});

const call = (name: string, args: Record<string, unknown>) => mcp.callTool({ name, arguments: args });

describe('over MCP', () => {
  it('an agent comments (once per idempotency key), claims its assigned task with the discussion, and hands it in', async () => {
    const task = await createTask(t, { assignee: agent.id });
    await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'Start with the failing test.' } });
    const first = outputOf<{ id: string }>(await call('comments_create', { id: task.id, body: 'On it.', idempotency_key: 'mcp-comment-1' }));
    const again = outputOf<{ id: string }>(await call('comments_create', { id: task.id, body: 'On it.', idempotency_key: 'mcp-comment-1' }));
    expect(again.id).toBe(first.id);
    const claimed = outputOf<{ claims: { lease: { epoch: number }; discussion: { human_comments: { body: string }[] } }[] }>(await call('tasks_claim_next', {}));
    expect(claimed.claims[0]?.discussion.human_comments.map((c) => c.body)).toEqual(['Start with the failing test.']);
    const handed = outputOf<{ status: string; handoff: { summary: string } }>(await call('tasks_hand_in', { id: task.id, summary: 'Fixed.', lease_epoch: claimed.claims[0]?.lease.epoch }));
    expect(handed).toMatchObject({ status: 'in_review', handoff: { summary: 'Fixed.' } });
  });

  it('refusals are problem documents with their own codes', async () => {
    const other = await t.addPrincipal({ kind: 'agent', name: 'someone-else' });
    const task = await createTask(t, { assignee: other.id });
    expect(problemOf(await call('tasks_claim', { id: task.id }))).toMatchObject({ code: 'assigned_to_other', assignee: { id: other.id } });
    expect(problemOf(await call('comments_create', { id: task.id, body: 'cc @ghost' }))).toMatchObject({ code: 'unknown_principal', status: 422 });
    expect(problemOf(await call('tasks_review', { id: task.id, decision: 'approve' }))).toMatchObject({ code: 'forbidden_scope' });
  });
});

describe('over GraphQL', () => {
  it('comments, reads the thread as Task.comments, assigns, and requests changes', async () => {
    const task = await createTask(t);
    const posted = await graphql<{ createComment: { id: string; mentions: string[] } }>(t, 'mutation ($id: ID!) { createComment(id: $id, body: "Ping @mcp-agent") { id mentions } }', { variables: { id: task.id } });
    expect(posted.errors).toBeUndefined();
    expect(posted.data?.createComment.mentions).toEqual([agent.id]);
    const read = await graphql<{ task: { comments: { data: { body: string; author: { kind: string } }[] } } }>(t, 'query ($id: ID!) { task(id: $id) { comments { data { body author { kind } } } } }', { variables: { id: task.id } });
    expect(read.data?.task.comments.data).toEqual([{ body: 'Ping @mcp-agent', author: { kind: 'human' } }]);

    const assigned = await graphql<{ assignTask: { assignee: { id: string } } }>(t, 'mutation ($id: ID!, $who: String) { assignTask(id: $id, assignee: $who) { assignee { id } } }', { variables: { id: task.id, who: agent.id } });
    expect(assigned.data?.assignTask.assignee.id).toBe(agent.id);
    const claim = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent.token })).json<{ lease: { epoch: number } }>();
    await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Done', lease_epoch: claim.lease.epoch }, token: agent.token });
    const missing = await graphql(t, 'mutation ($id: ID!) { reviewTask(id: $id, decision: request_changes) { status } }', { variables: { id: task.id } });
    expect(missing.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed' });
    const reviewed = await graphql<{ reviewTask: { status: string; discussion: unknown } }>(t, 'mutation ($id: ID!) { reviewTask(id: $id, decision: request_changes, comment: "Add docs.") { status } }', { variables: { id: task.id } });
    expect(reviewed.errors).toBeUndefined();
    expect(reviewed.data?.reviewTask.status).toBe('in_progress');
    const resumed = await graphql<{ task: { discussion: { changes_requested: { body: string } } } }>(t, 'query ($id: ID!) { task(id: $id) { discussion { changes_requested { body } } } }', { variables: { id: task.id }, token: agent.token });
    expect(resumed.data?.task.discussion.changes_requested.body).toBe('Add docs.');
  });
});

describe("another agent's task (issue 36 item 1)", () => {
  /** A task `holder` claimed, and one assigned to it while todo. */
  async function othersTasks(): Promise<{ holder: Principal; held: string; assigned: string }> {
    const holder = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:claim'] });
    const held = await createTask(t);
    expect((await t.request('POST', `/api/v1/tasks/${held.id}/claim`, { body: {}, token: holder.token })).status).toBe(200);
    const assigned = await createTask(t, { assignee: holder.id });
    return { holder, held: held.id, assigned: assigned.id };
  }

  it('is not taken over MCP: tasks_assign answers 403 not_your_task, the lease and the assignment stay', async () => {
    const { holder, held, assigned } = await othersTasks();
    expect(problemOf(await call('tasks_assign', { id: held, assignee: agent.id, release_lease: true }))).toMatchObject({ code: 'not_your_task', status: 403, holder: { id: holder.id } });
    expect(problemOf(await call('tasks_assign', { id: assigned, assignee: agent.id }))).toMatchObject({ code: 'not_your_task', status: 403, assignee: { id: holder.id } });
    const task = (await t.request('GET', `/api/v1/tasks/${held}?view=full`)).json<{ status: string; lease: { holder: { id: string } } }>();
    expect(task).toMatchObject({ status: 'in_progress', lease: { holder: { id: holder.id } } });
  });

  it('is not taken over GraphQL: assignTask answers not_your_task, the lease and the assignment stay', async () => {
    const { holder, held, assigned } = await othersTasks();
    const mutation = 'mutation ($id: ID!, $who: String, $release: Boolean) { assignTask(id: $id, assignee: $who, release_lease: $release) { id } }';
    const takeHeld = await graphql(t, mutation, { variables: { id: held, who: agent.id, release: true }, token: agent.token });
    expect(takeHeld.errors?.[0]?.extensions).toMatchObject({ code: 'not_your_task', status: 403 });
    const takeAssigned = await graphql(t, mutation, { variables: { id: assigned, who: agent.id }, token: agent.token });
    expect(takeAssigned.errors?.[0]?.extensions).toMatchObject({ code: 'not_your_task', status: 403 });
    const task = (await t.request('GET', `/api/v1/tasks/${assigned}?view=full`)).json<{ assignee: { id: string } }>();
    expect(task.assignee.id).toBe(holder.id);
  });
});

describe('attempts and the dead-letter', () => {
  it('an MCP agent reports a failed attempt; a human requeues the dead-lettered task over GraphQL', async () => {
    const task = await createTask(t, { max_attempts: 1, assignee: agent.id });
    const claimed = outputOf<{ lease: { id: string } }>(await call('tasks_claim', { id: task.id }));
    expect(problemOf(await call('leases_release', { id: claimed.lease.id, outcome: 'failed' }))).toMatchObject({ code: 'validation_failed' });
    outputOf(await call('leases_release', { id: claimed.lease.id, outcome: 'failed', reason: 'The build server is down.' }));
    const dead = await graphql<{ tasks: { data: { id: string; blocked_reason: string; failures: { reason: string }[] }[] } }>(
      t,
      'query { tasks(blocked_reason: attempts_exhausted) { data { id blocked_reason failures { reason } } } }',
    );
    expect(dead.errors).toBeUndefined();
    expect(dead.data?.tasks.data.find((x) => x.id === task.id)).toEqual({ id: task.id, blocked_reason: 'attempts_exhausted', failures: [{ reason: 'The build server is down.' }] });
    const requeued = await graphql<{ requeueTask: { status: string; attempts: number } }>(t, 'mutation ($id: ID!) { requeueTask(id: $id) { status attempts } }', { variables: { id: task.id } });
    expect(requeued.data?.requeueTask).toEqual({ status: 'todo', attempts: 0 });
    const refused = await graphql(t, 'mutation ($id: ID!) { requeueTask(id: $id) { status } }', { variables: { id: task.id }, token: agent.token });
    expect(refused.errors?.[0]?.extensions).toMatchObject({ code: 'human_required' });
  });
});

describe('on the event stream', () => {
  it('a principal following its own subject hears comment.mentioned', async () => {
    const stream = await subscribe(`${baseUrl}/api/v1/events/stream?types=comment.mentioned&subject=${agent.id}`, agent.token, ['comment.mentioned']);
    try {
      const task = await createTask(t);
      await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: '@mcp-agent can you take a look?' } });
      await stream.waitFor(1, 10_000);
      expect(stream.received[0]?.data).toMatchObject({ type: 'comment.mentioned', subject: agent.id });
    } finally {
      stream.close();
    }
  });
});
