import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/domain/scopes.ts';
import { TASK_STATUSES, TRANSITIONS, type TaskStatus } from '../../src/domain/task-status.ts';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem, setTaskState, type TaskBody, taskRow } from './fixtures.ts';

/**
 * DESIGN.md §4, written out independently of src/domain/task-status.ts: for each legal move,
 * which operation makes it. A pair missing here is illegal.
 */
const DESIGN: Record<TaskStatus, Partial<Record<TaskStatus, 'update' | 'claim' | 'release'>>> = {
  todo: { in_progress: 'claim', blocked: 'update', cancelled: 'update' },
  in_progress: { todo: 'release', in_review: 'update', blocked: 'update', cancelled: 'update' },
  in_review: { done: 'update', in_progress: 'update', cancelled: 'update' },
  blocked: { todo: 'update', cancelled: 'update' },
  done: { todo: 'update' },
  cancelled: { todo: 'update' },
};
const designTargets = (from: TaskStatus) => Object.keys(DESIGN[from]).sort();
const updateTargets = (from: TaskStatus) => TASK_STATUSES.filter((to) => DESIGN[from][to] === 'update');
const PAIRS = TASK_STATUSES.flatMap((from) => TASK_STATUSES.map((to) => [from, to] as const));

let t: TestServer;
/** Claims tasks, so that a task in review has a last lease holder to be handed back to. */
let worker: Principal;
beforeAll(async () => {
  t = await startTestServer();
  worker = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'], name: 'worker' });
});
afterAll(() => t.close());

/**
 * A fresh task (created over HTTP) in `status` at `version`. Setup SQL puts it there, except
 * in_review, which goes the real way (claimed by `worker`, who moves it to review): sending work
 * back from review needs a last lease holder (DESIGN.md §4).
 */
async function taskIn(status: TaskStatus, version = 1): Promise<TaskBody> {
  const task = await createTask(t, { title: `from ${status}` });
  if (status === 'in_review') {
    const claimed = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: worker.token, body: {} });
    expect(claimed.status, claimed.body).toBe(200);
    const reviewed = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { token: worker.token, body: { status: 'in_review' } });
    expect(reviewed.status, reviewed.body).toBe(200);
  }
  await setTaskState(t, task.id, status, version);
  return task;
}

function patchStatus(id: string, status: TaskStatus, options: { token?: string; ifMatch?: string } = {}) {
  return t.request('PATCH', `/api/v1/tasks/${id}`, { body: { status }, ...options });
}

/** The task row and its event count are exactly as before a refused request. */
async function expectUnchanged(id: string, status: TaskStatus, version: number, events: number) {
  const row = await taskRow(t, id);
  expect(row.status).toBe(status);
  expect(row.version).toBe(version);
  expect(await eventsOf(t, id)).toHaveLength(events);
}

it('the table in src matches DESIGN.md §4', () => {
  for (const from of TASK_STATUSES) expect([...TRANSITIONS[from]].sort(), from).toEqual(designTargets(from));
});

describe('PATCH /tasks/{id} {status} for every (from, to) pair, as a human', () => {
  it.each(PAIRS)('%s → %s', async (from, to) => {
    const task = await taskIn(from);
    const before = await eventsOf(t, task.id);
    const eventCount = before.length;
    const res = await patchStatus(task.id, to);
    const via = DESIGN[from][to];

    if (from === to) {
      expect(res.status, res.body).toBe(200);
      expect(res.json<TaskBody>()).toMatchObject({ status: from, version: 1 });
      expect(res.headers.etag).toBe('"1"');
      await expectUnchanged(task.id, from, 1, eventCount);
      return;
    }

    if (via === 'update') {
      expect(res.status, res.body).toBe(200);
      expect(res.json<TaskBody>()).toMatchObject({ id: task.id, status: to, version: 2 });
      expect(res.headers.etag).toBe('"2"');
      const row = await taskRow(t, task.id);
      expect(row).toMatchObject({ status: to, version: 2 });
      // Exactly one status change, by this caller; a lease handed over alongside may add its own events.
      const added = (await eventsOf(t, task.id)).slice(eventCount);
      const changes = added.filter((e) => e.type === 'task.status_changed');
      expect(changes).toHaveLength(1);
      expect(changes[0]).toMatchObject({ subject: task.id, actor_kind: 'human', data: { from, to } });
      expect(added.filter((e) => e.type === 'task.updated')).toEqual([]);
      return;
    }

    const problem = expectProblem(res, 422, 'invalid_transition');
    expect(problem.retryable).toBe(false);
    expect([...(problem.legal_transitions as string[])].sort()).toEqual(designTargets(from));
    expect(problem.legal_transitions).toEqual(TRANSITIONS[from]);
    expect(problem.current_status).toBe(from);
    if (via === 'claim') {
      expect(problem.hint).toMatch(/claim/i);
      expect(problem.hint).toContain(`/api/v1/tasks/${task.id}/claim`);
    } else if (via === 'release') {
      expect(problem.hint).toMatch(/release/i);
    } else if (from === 'in_progress' && to === 'done') {
      expect(problem.hint).toMatch(/pull request/i);
      expect(problem.hint).toContain('in_review');
    } else {
      for (const target of designTargets(from)) expect(problem.hint).toContain(target);
    }
    await expectUnchanged(task.id, from, 1, eventCount);
  });
});

describe('guards beyond the table', () => {
  let agent: Principal;
  let reviewer: Principal;
  beforeAll(async () => {
    agent = await t.addPrincipal({ kind: 'agent', scopes: SCOPES.filter((s) => s !== 'tasks:review') });
    reviewer = await t.addPrincipal({ kind: 'agent', scopes: [...SCOPES] });
  });

  it('in_review → done by an agent without tasks:review is 403 forbidden_scope naming tasks:review', async () => {
    const task = await taskIn('in_review');
    const events = (await eventsOf(t, task.id)).length;
    const problem = expectProblem(await patchStatus(task.id, 'done', { token: agent.token }), 403, 'forbidden_scope');
    expect(problem.required_scope).toBe('tasks:review');
    await expectUnchanged(task.id, 'in_review', 1, events);
  });

  it('in_review → done by an agent holding tasks:review is 200', async () => {
    const task = await taskIn('in_review');
    const res = await patchStatus(task.id, 'done', { token: reviewer.token });
    expect(res.status, res.body).toBe(200);
    expect((await eventsOf(t, task.id)).at(-1)).toMatchObject({ type: 'task.status_changed', actor_id: reviewer.id, actor_kind: 'agent' });
  });

  it('in_review → done by a human is 200', async () => {
    const task = await taskIn('in_review');
    const res = await patchStatus(task.id, 'done');
    expect(res.status, res.body).toBe(200);
    expect(res.json<TaskBody>().status).toBe('done');
  });

  it.each(['done', 'cancelled'] as const)('%s → todo (reopen) by an agent is 403 human_required, by a human 200', async (from) => {
    for (const caller of [agent, reviewer]) {
      const task = await taskIn(from);
      expectProblem(await patchStatus(task.id, 'todo', { token: caller.token }), 403, 'human_required');
      await expectUnchanged(task.id, from, 1, 1);
    }
    const task = await taskIn(from);
    const res = await patchStatus(task.id, 'todo');
    expect(res.status, res.body).toBe(200);
    expect(res.json<TaskBody>()).toMatchObject({ status: 'todo', version: 2 });
  });

  it('an agent makes the unguarded moves', async () => {
    const task = await taskIn('todo');
    const res = await patchStatus(task.id, 'blocked', { token: agent.token });
    expect(res.status, res.body).toBe(200);
    expect((await eventsOf(t, task.id)).at(-1)).toMatchObject({ type: 'task.status_changed', actor_id: agent.id, actor_kind: 'agent' });
  });
});

describe('legal_transitions and next_actions on GET', () => {
  interface NextAction {
    operation: string;
    method: string;
    href: string;
    headers?: Record<string, string>;
    body?: Record<string, unknown>;
    fill?: string[];
  }
  // The one status move next_actions offers from each status (spec/api.md): the step forward.
  const forward: Record<TaskStatus, TaskStatus | null> = { todo: 'in_progress', in_progress: 'in_review', in_review: 'done', blocked: 'todo', done: null, cancelled: null };
  interface Caller {
    name: string;
    token: () => string;
    /** The update-targets this caller may take from `from` (DESIGN.md §4 guards). */
    may: (from: TaskStatus, to: TaskStatus) => boolean;
    /** Holds tasks:review: offered the review (tasks_review) of work in review instead of the move to done. */
    reviews: boolean;
  }
  const humanOnly = (from: TaskStatus, to: TaskStatus) => (from === 'done' || from === 'cancelled') && to === 'todo';
  // A task in progress is its lease holder's to move, or a human's (DESIGN.md §4); these agents hold no lease on it.
  const agentMay = (from: TaskStatus, to: TaskStatus) => from !== 'in_progress' && !humanOnly(from, to);
  let agent: Principal;
  let reviewer: Principal;
  let reader: Principal;
  let outsider: Principal;
  beforeAll(async () => {
    agent = await t.addPrincipal({ kind: 'agent', scopes: SCOPES.filter((s) => s !== 'tasks:review') });
    reviewer = await t.addPrincipal({ kind: 'agent', scopes: [...SCOPES] });
    reader = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
    outsider = await t.addPrincipal({ kind: 'agent', scopes: [...SCOPES], allowlist: ['tasks_get', 'tasks_list'] });
  });
  const callers: Caller[] = [
    { name: 'a human', token: () => t.adminToken, may: () => true, reviews: true },
    { name: 'an agent without tasks:review', token: () => agent.token, may: (from, to) => agentMay(from, to) && !(from === 'in_review' && to === 'done'), reviews: false },
    { name: 'an agent with tasks:review', token: () => reviewer.token, may: agentMay, reviews: true },
  ];

  describe.each(callers)('for $name', (caller) => {
    it.each(TASK_STATUSES)('from %s: the forward move is offered as a ready-to-send PATCH that succeeds; every other update succeeds or is refused as the guards say', async (from) => {
      const task = await taskIn(from, 7);
      const read = await t.request('GET', `/api/v1/tasks/${task.id}`, { token: caller.token() });
      expect(read.status, read.body).toBe(200);
      expect(read.headers.etag).toBe('"7"');
      const shown = read.json<{ version: number; legal_transitions: string[]; next_actions: NextAction[] }>();
      expect(shown.version).toBe(7);
      expect([...shown.legal_transitions].sort()).toEqual(designTargets(from));

      // Every action is a complete request; the status moves among them are PATCHes guarded by the current version.
      for (const action of shown.next_actions) {
        expect(action.href).toMatch(/^\/api\/v1\//);
        expect(action.headers?.['Idempotency-Key']).toMatch(/^[\w-]{16}$/);
      }
      const moves = shown.next_actions.filter((a) => a.operation === 'tasks_update');
      const reviews = from === 'in_review' && caller.reviews;
      const expected = updateTargets(from).filter((to) => to === forward[from] && caller.may(from, to) && !reviews);
      // Work in review is offered its review: approve as it is, or request changes with a comment to write.
      expect(shown.next_actions.filter((a) => a.operation === 'tasks_review').map((a) => ({ body: a.body, fill: a.fill }))).toEqual(
        reviews ? [{ body: { decision: 'approve' }, fill: undefined }, { body: { decision: 'request_changes' }, fill: ['comment'] }] : [],
      );
      expect(moves.map((a) => String(a.body?.status)).sort()).toEqual(expected.sort());
      for (const action of moves) {
        expect(action).toMatchObject({ method: 'PATCH', href: `/api/v1/tasks/${task.id}` });
        expect(action.headers?.['If-Match']).toBe('"7"');
      }

      // Send each listed move as written (a fresh task in the same state each time); the rest must be refused.
      for (const to of updateTargets(from)) {
        const fresh = await taskIn(from, 7);
        const action = moves.find((a) => a.body?.status === to);
        const res = await t.request(action?.method ?? 'PATCH', `/api/v1/tasks/${fresh.id}`, {
          token: caller.token(),
          body: action?.body ?? { status: to },
          ifMatch: action?.headers?.['If-Match'] ?? '"7"',
        });
        if (action || caller.may(from, to)) {
          expect(res.status, `${from} → ${to}: ${res.body}`).toBe(200);
          expect(res.json<TaskBody>()).toMatchObject({ status: to, version: 8 });
        } else {
          expect(res.status, `${from} → ${to}: ${res.body}`).toBe(403);
        }
      }
    });
  });

  it('a caller who may not write (scope or allowlist) gets legal_transitions but no next_actions', async () => {
    for (const caller of [reader, outsider]) {
      for (const from of TASK_STATUSES) {
        const task = await taskIn(from);
        const res = await t.request('GET', `/api/v1/tasks/${task.id}`, { token: caller.token });
        expect(res.status, res.body).toBe(200);
        const shown = res.json<{ legal_transitions: string[]; next_actions: NextAction[] }>();
        expect([...shown.legal_transitions].sort()).toEqual(designTargets(from));
        expect(shown.next_actions).toEqual([]);
      }
    }
  });

  it('list items carry legal_transitions too', async () => {
    const task = await createTask(t, { labels: ['list-check'] });
    await setTaskState(t, task.id, 'blocked');
    const res = await t.request('GET', '/api/v1/tasks?status=blocked&labels=list-check');
    expect(res.status, res.body).toBe(200);
    const item = res.json<{ data: { id: string; legal_transitions: string[] }[] }>().data.find((d) => d.id === task.id);
    expect(item?.legal_transitions.slice().sort()).toEqual(designTargets('blocked'));
  });
});
