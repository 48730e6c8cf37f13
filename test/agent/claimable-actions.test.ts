import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { createTask } from '../rest/fixtures.ts';
import { AGENT_SCOPES, type NextAction, sendAction } from './follow.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ retryBackoffS: [300] });
});
afterAll(() => t.close());

interface Shown {
  id: string;
  next_actions: NextAction[];
}

/** The task as the agent reads it, and what each of its next actions answers when sent as written. */
async function offeredAndSent(token: string, id: string): Promise<{ operations: string[]; statuses: number[] }> {
  const res = await t.request('GET', `/api/v1/tasks/${id}`, { token });
  expect(res.status, res.body).toBe(200);
  const actions = res.json<Shown>().next_actions;
  const statuses = [];
  for (const action of actions) statuses.push((await sendAction(t, token, action)).status);
  return { operations: actions.map((a) => a.operation), statuses };
}

describe('a todo task the caller may not claim now offers no claim (spec/api.md, "next_actions": what you may do right now)', () => {
  it('scheduled for later: claim-next instead, and every action sent as written succeeds', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const later = await createTask(t, { title: 'not yet', labels: ['claimable-later'], not_before: '2999-01-01T00:00:00Z' });
    const { operations, statuses } = await offeredAndSent(agent.token, later.id);
    expect(operations).toEqual(['tasks_claim_next']);
    expect(statuses).toEqual([200]);
  });

  it('backing off after a failed attempt: the release answer and the task offer no claim', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await createTask(t, { title: 'flaky', labels: ['claimable-backoff'] });
    const claimed = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} });
    expect(claimed.status, claimed.body).toBe(200);
    const lease = claimed.json<{ lease: { id: string } }>().lease;
    const released = await t.request('POST', `/api/v1/leases/${lease.id}/release`, { token: agent.token, body: { outcome: 'failed', reason: 'tests fail' } });
    expect(released.status, released.body).toBe(200);
    expect(released.json<{ task: Shown }>().task.next_actions.map((a) => a.operation)).not.toContain('tasks_claim');
    expect((await offeredAndSent(agent.token, task.id)).operations).not.toContain('tasks_claim');
  });

  it('assigned to someone else: no claim; the assignee is still offered it', async () => {
    const agent = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const assignee = await t.addPrincipal({ kind: 'agent', scopes: [...AGENT_SCOPES] });
    const task = await createTask(t, { title: 'theirs', labels: ['claimable-assigned'] });
    const assigned = await t.request('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: assignee.id } });
    expect(assigned.status, assigned.body).toBe(200);
    expect((await offeredAndSent(agent.token, task.id)).operations).not.toContain('tasks_claim');
    const theirs = await offeredAndSent(assignee.token, task.id);
    expect(theirs).toEqual({ operations: ['tasks_claim'], statuses: [200] });
  });
});
