import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
/** The server's clock, moved by the test: deadlines pass without sleeping. */
let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };

let t: TestServer;
let agent: { id: string; token: string };
let human: { id: string; token: string };
let other: { id: string; token: string };
beforeAll(async () => {
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, { clock });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'], name: 'asker-bot' });
  human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review', 'events:read'], name: 'alice' });
  other = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write', 'tasks:review', 'events:read'], name: 'bob' });
});
afterAll(() => t.close());

interface Ask {
  id: string;
  status: string;
  to: string;
  answer: { text: string; option?: string } | null;
  answered_by: { id: string } | null;
  defaulted: boolean;
  escalation: string[];
  to_role?: string;
}

const sweep = () => t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });

async function claimedTask(title: string): Promise<{ id: string; lease: string }> {
  const task = (await t.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
  const claim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} });
  expect(claim.status, claim.body).toBe(200);
  return { id: task.id, lease: claim.json<{ lease: { id: string } }>().lease.id };
}

async function ask(taskId: string, body: Record<string, unknown>): Promise<Ask> {
  const res = await t.request('POST', `/api/v1/tasks/${taskId}/asks`, { token: agent.token, body: { question: 'Deploy to production?', options: [{ label: 'yes', value: 'deploy' }, { label: 'no' }], to: 'alice', timeout_s: 600, default: { option: 'no' }, ...body } });
  expect(res.status, res.body).toBe(201);
  return res.json<Ask>();
}

describe('asks', () => {
  it('an open ask shows on the task and in the addressee inbox; the answer reaches the asker by long-poll, timeline and next claim', async () => {
    const task = await claimedTask('ask flow');
    const made = await ask(task.id, {});
    expect(made).toMatchObject({ status: 'open', to: human.id, answer: null });
    const view = (await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token })).json<{ open_asks?: number }>();
    expect(view.open_asks).toBe(1);
    const listed = (await t.request('GET', '/api/v1/tasks?limit=100')).json<{ data: { id: string; open_asks?: number }[] }>();
    expect(listed.data.find((x) => x.id === task.id)?.open_asks).toBe(1);

    const inbox = (await t.request('GET', '/api/v1/inbox?state=unread', { token: human.token })).json<{ data: { kind: string; ref_id: string }[]; counts: { unread: number } }>();
    expect(inbox.data.find((i) => i.ref_id === made.id)?.kind).toBe('ask');
    expect(inbox.counts.unread).toBeGreaterThanOrEqual(1);

    // The asker waits on the ask while the human answers.
    const waiting = t.request('GET', `/api/v1/asks/${made.id}?wait_s=30`, { token: agent.token });
    const key = 'answer-once-1';
    const answered = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, key, body: { option: 'yes' } });
    expect(answered.status, answered.body).toBe(200);
    const got = (await waiting).json<Ask>();
    expect(got).toMatchObject({ status: 'answered', answer: { text: 'deploy', option: 'yes' }, answered_by: { id: human.id }, defaulted: false });

    // Idempotent: the same key replays; a second answer is refused.
    const replay = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, key, body: { option: 'yes' } });
    expect(replay.status).toBe(200);
    const again = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option: 'no' } });
    expect(again.status).toBe(409);
    expect(again.json<{ code: string; ask_status: string }>()).toMatchObject({ code: 'ask_closed', ask_status: 'answered' });

    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token })).json<{ open_asks?: number }>().open_asks).toBeUndefined();
    const events = (await t.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: { type: string; actor_id?: string; data: Record<string, unknown> }[] }>().data;
    const answeredEvent = events.find((e) => e.type === 'ask.answered');
    expect(answeredEvent?.data).toMatchObject({ ask_id: made.id, answer: { text: 'deploy', option: 'yes' }, defaulted: false });

    // The asker releases its lease and gets the answer with its next claim of the task.
    expect((await t.request('POST', `/api/v1/leases/${task.lease}/release`, { token: agent.token, body: {} })).status).toBe(200);
    const reclaim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} });
    expect(reclaim.status, reclaim.body).toBe(200);
    const discussion = reclaim.json<{ discussion: { answered_asks?: unknown[] } }>().discussion;
    expect(discussion.answered_asks).toEqual([{ id: made.id, question: 'Deploy to production?', answer: 'deploy', option: 'yes', by: human.id, defaulted: false }]);

    const asker = (await t.request('GET', '/api/v1/inbox?kind=answer', { token: agent.token })).json<{ data: { ref_id: string }[] }>();
    expect(asker.data.map((i) => i.ref_id)).toContain(made.id);
  });

  it('the asker keeps its lease while it heartbeats past the TTL, then reads the answer and hands in under the same lease', async () => {
    const task = await claimedTask('ask and keep working');
    const made = await ask(task.id, { timeout_s: 3600 });
    const leaseBefore = (await t.request('GET', `/api/v1/leases/${task.lease}`, { token: agent.token })).json<{ epoch: number; ttl_s: number }>();
    // Well past the lease's TTL, in heartbeat-sized steps, with the sweeper running after each.
    for (let step = 0; step < 4; step++) {
      at = new Date(at.getTime() + (leaseBefore.ttl_s / 3) * 1000 * 1.5);
      const beat = await t.request('POST', `/api/v1/leases/${task.lease}/heartbeat`, { token: agent.token, body: step === 0 ? { note: 'waiting on alice' } : {} });
      expect(beat.status, beat.body).toBe(200);
      expect((await sweep()).status).toBe(200);
    }
    const open = (await t.request('GET', `/api/v1/asks/${made.id}`, { token: agent.token })).json<Ask>();
    expect(open.status).toBe('open');
    expect((await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option: 'yes' } })).status).toBe(200);
    const got = (await t.request('GET', `/api/v1/asks/${made.id}?wait_s=5`, { token: agent.token })).json<Ask>();
    expect(got).toMatchObject({ status: 'answered', answer: { option: 'yes' }, answered_by: { id: human.id } });
    const lease = (await t.request('GET', `/api/v1/leases/${task.lease}`, { token: agent.token })).json<{ epoch: number; state: string }>();
    expect(lease).toMatchObject({ epoch: leaseBefore.epoch, state: 'active' });
    const handIn = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { token: agent.token, body: { lease_epoch: lease.epoch, summary: 'Deployed, as alice said.' } });
    expect(handIn.status, handIn.body).toBe(200);
  });

  it('concurrent answers: exactly one wins, the others are ask_closed', async () => {
    const task = await claimedTask('race');
    const made = await ask(task.id, {});
    const answers = await Promise.all(['yes', 'no', 'yes', 'no'].map((option) => t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
    const events = (await t.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: { type: string }[] }>().data;
    expect(events.filter((e) => e.type === 'ask.answered')).toHaveLength(1);
  });

  it('only an addressee answers; an option not offered is refused', async () => {
    const task = await claimedTask('who answers');
    const made = await ask(task.id, {});
    const stranger = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: other.token, body: { option: 'yes' } });
    expect(stranger.status).toBe(403);
    expect(stranger.json<{ code: string }>().code).toBe('not_addressee');
    const bad = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option: 'maybe' } });
    expect(bad.json<{ code: string }>().code).toBe('validation_failed');
  });

  it('names people whose names have spaces as a mention does (a space written _), in to and escalation alike', async () => {
    const ada = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'], name: 'Ada Lovelace' });
    const task = await claimedTask('named with spaces');
    expect(await ask(task.id, { to: 'Ada Lovelace', escalation: ['Ada_Lovelace', 'bob'] })).toMatchObject({ to: ada.id, escalation: [other.id] });
    expect(await ask(task.id, { to: 'bob', escalation: ['ada_lovelace'] })).toMatchObject({ to: other.id, escalation: [ada.id] });
  });

  it('escalates at the first deadline, applies the default at the last; an answer after it is refused saying so', async () => {
    const task = await claimedTask('deadline');
    const made = await ask(task.id, { escalation: ['bob'], timeout_s: 60 });
    expect(made.escalation).toEqual([other.id]);
    at = new Date(at.getTime() + 61_000);
    const late = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option: 'yes' } });
    expect(late.status).toBe(409);
    expect((await sweep()).status).toBe(200);
    const escalated = (await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>();
    expect(escalated).toMatchObject({ status: 'open', to: other.id, escalation: [] });
    const bobInbox = (await t.request('GET', '/api/v1/inbox?kind=ask', { token: other.token })).json<{ data: { ref_id: string }[] }>();
    expect(bobInbox.data.map((i) => i.ref_id)).toContain(made.id);

    at = new Date(at.getTime() + 61_000);
    expect((await sweep()).status).toBe(200);
    expect((await sweep()).status).toBe(200);
    const defaulted = (await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>();
    expect(defaulted).toMatchObject({ status: 'defaulted', defaulted: true, answer: { text: 'no', option: 'no' }, answered_by: { id: 'system' } });
    const after = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: other.token, body: { option: 'yes' } });
    expect(after.status).toBe(409);
    expect(after.json<{ code: string; ask_status: string; detail: string }>()).toMatchObject({ code: 'ask_closed', ask_status: 'defaulted' });
    expect(after.json<{ detail: string }>().detail).toContain('default');
    const events = (await t.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: { type: string }[] }>().data;
    expect(events.filter((e) => e.type === 'ask.escalated')).toHaveLength(1);
    const defaults = events.filter((e) => e.type === 'ask.defaulted');
    expect(defaults).toHaveLength(1);
    expect(JSON.stringify(defaults[0])).toContain('"system"');
  });

  it('a cancelled task closes its asks', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'to cancel' } })).json<{ id: string }>();
    const made = await ask(task.id, {});
    const cancel = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'cancelled' } });
    expect(cancel.status, cancel.body).toBe(200);
    expect((await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>().status).toBe('cancelled');
    const items = (await t.request('GET', '/api/v1/inbox?kind=ask&state=done', { token: human.token })).json<{ data: { ref_id: string }[] }>();
    expect(items.data.map((i) => i.ref_id)).toContain(made.id);
  });

  const askItemDone = async (askId: string) => (await t.request('GET', '/api/v1/inbox?kind=ask&state=done', { token: human.token })).json<{ data: { ref_id: string }[] }>().data.some((i) => i.ref_id === askId);

  it('a review approved to done closes its asks', async () => {
    const task = await claimedTask('approve with an open ask');
    const made = await ask(task.id, {});
    const handIn = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { token: agent.token, body: { summary: 'done, though I asked' } });
    expect(handIn.status, handIn.body).toBe(200);
    expect(handIn.json<{ open_asks?: number }>().open_asks).toBe(1);
    const approved = await t.request('POST', `/api/v1/tasks/${task.id}/review`, { token: human.token, body: { decision: 'approve' } });
    expect(approved.status, approved.body).toBe(200);
    expect(approved.json<{ status: string; open_asks?: number }>()).toMatchObject({ status: 'done' });
    expect(approved.json<{ open_asks?: number }>().open_asks).toBeUndefined();
    expect((await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>().status).toBe('cancelled');
    expect(await askItemDone(made.id)).toBe(true);
    const events = (await t.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: { type: string; data: { reason?: string } }[] }>().data;
    expect(events.find((e) => e.type === 'ask.cancelled')?.data.reason).toBe('task_done');
    // Its deadline passes: nothing escalates or defaults.
    at = new Date(at.getTime() + 601_000);
    expect((await sweep()).status).toBe(200);
    expect((await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>().status).toBe('cancelled');
  });

  it("cancelling a parent closes its subtasks' asks", async () => {
    const parent = await claimedTask('parent');
    const child = (await t.request('POST', '/api/v1/tasks', { body: { title: 'child', parent_id: parent.id } })).json<{ id: string }>();
    expect((await t.request('POST', `/api/v1/tasks/${child.id}/claim`, { token: agent.token, body: {} })).status).toBe(200);
    const made = await ask(child.id, {});
    expect((await t.request('POST', `/api/v1/tasks/${parent.id}/hand_in`, { token: agent.token, body: { summary: 'parent done' } })).status).toBe(200);
    const done = await t.request('PATCH', `/api/v1/tasks/${parent.id}`, { body: { status: 'done', cancel_children: true } });
    expect(done.status, done.body).toBe(200);
    const childView = (await t.request('GET', `/api/v1/tasks/${child.id}`)).json<{ status: string; open_asks?: number }>();
    expect(childView.status).toBe('cancelled');
    expect(childView.open_asks).toBeUndefined();
    expect((await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>().status).toBe('cancelled');
    expect(await askItemDone(made.id)).toBe(true);
  });

  it('the asker withdraws its ask; asks list by task and addressee', async () => {
    const task = await claimedTask('withdraw');
    const made = await ask(task.id, { options: [], default: { text: 'carry on' } });
    const mine = (await t.request('GET', '/api/v1/asks?to=me&status=open', { token: human.token })).json<{ data: { id: string }[] }>();
    expect(mine.data.map((a) => a.id)).toContain(made.id);
    const cancelled = await t.request('POST', `/api/v1/asks/${made.id}/cancel`, { token: agent.token, body: {} });
    expect(cancelled.json<Ask>().status).toBe('cancelled');
    const byTask = (await t.request('GET', `/api/v1/asks?task_id=${task.id}`)).json<{ data: { id: string; status: string }[] }>();
    expect(byTask.data).toEqual([expect.objectContaining({ id: made.id, status: 'cancelled' })]);
  });
});

describe('asks to a role', () => {
  const people: Record<'admin1' | 'admin2' | 'member1' | 'member2', { id: string; token: string }> = { admin1: { id: '', token: '' }, admin2: { id: '', token: '' }, member1: { id: '', token: '' }, member2: { id: '', token: '' } };
  beforeAll(async () => {
    for (const name of Object.keys(people) as (keyof typeof people)[]) {
      people[name] = await t.addPrincipal({ kind: 'human', name: `role-${name}` });
      const set = await t.request('POST', `/api/v1/agents/${people[name].id}/role`, { body: { role: name.startsWith('admin') ? 'admin' : 'member' } });
      expect(set.status, set.body).toBe(200);
    }
  });
  const askItem = async (who: { token: string }, askId: string, state: string) =>
    (await t.request('GET', `/api/v1/inbox?kind=ask&state=${state}`, { token: who.token })).json<{ data: { ref_id: string }[] }>().data.some((i) => i.ref_id === askId);

  it("puts the ask in every holder's inbox and wait; two admins answer at once, exactly one wins, and every holder's item closes", async () => {
    const { admin1, admin2 } = people;
    const before = (await t.request('GET', '/api/v1/wait?timeout_s=0&work=no', { token: admin1.token })).json<{ cursor: string }>().cursor;
    const task = await claimedTask('ask the admins');
    const made = await ask(task.id, { to: 'role:admin' });
    expect(made).toMatchObject({ status: 'open', to: 'role:admin', to_role: 'admin' });
    expect(await askItem(admin1, made.id, 'unread')).toBe(true);
    expect(await askItem(admin2, made.id, 'unread')).toBe(true);
    // The bootstrap admin is an owner, not an admin: not asked.
    expect((await t.request('GET', '/api/v1/inbox?kind=ask')).json<{ data: { ref_id: string }[] }>().data.map((i) => i.ref_id)).not.toContain(made.id);
    const woke = (await t.request('GET', `/api/v1/wait?timeout_s=0&work=no&after=${encodeURIComponent(before)}`, { token: admin1.token })).json<{ items: { type: string; data: { ask_id?: string; to?: string } }[] }>();
    expect(woke.items).toContainEqual(expect.objectContaining({ type: 'ask.created', data: expect.objectContaining({ ask_id: made.id, to: 'role:admin' }) as unknown }));
    const ids = async (query: string, who: { token: string }) => (await t.request('GET', `/api/v1/asks?${query}`, { token: who.token })).json<{ data: { id: string }[] }>().data.map((a) => a.id);
    expect(await ids('to=me&status=open', admin2)).toContain(made.id);
    expect(await ids('to=role:admin', human)).toContain(made.id);
    expect(await ids('to=me', human)).not.toContain(made.id);

    const answers = await Promise.all([admin1, admin2].map((who, i) => t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: who.token, body: { option: i === 0 ? 'yes' : 'no' } })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    const winner = answers.findIndex((a) => a.status === 200);
    expect(answers[1 - winner]?.json<{ code: string; ask_status: string }>()).toMatchObject({ code: 'ask_closed', ask_status: 'answered' });
    expect(await askItem(admin1, made.id, 'done')).toBe(true);
    expect(await askItem(admin2, made.id, 'done')).toBe(true);
    const later = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: admin1.token, body: { option: 'yes' } });
    expect(later.json<{ code: string }>().code).toBe('ask_closed');
    const events = (await t.request('GET', `/api/v1/tasks/${task.id}/events`)).json<{ data: { type: string; actor: { id: string } }[] }>().data;
    expect(events.filter((e) => e.type === 'ask.answered').map((e) => e.actor.id)).toEqual([[admin1, admin2][winner]?.id]);
  });

  it('escalates to a role: its holders may answer from then on, others may not', async () => {
    const { member1, member2 } = people;
    const task = await claimedTask('escalate to members');
    const made = await ask(task.id, { escalation: ['role:member'], timeout_s: 60 });
    expect(made).toMatchObject({ to: human.id, escalation: ['role:member'] });
    expect(made.to_role).toBeUndefined();
    const early = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: member1.token, body: { option: 'yes' } });
    expect(early.json<{ code: string }>().code).toBe('not_addressee');
    at = new Date(at.getTime() + 61_000);
    expect((await sweep()).status).toBe(200);
    expect((await t.request('GET', `/api/v1/asks/${made.id}`)).json<Ask>()).toMatchObject({ status: 'open', to: 'role:member', to_role: 'member', escalation: [] });
    expect(await askItem(member1, made.id, 'unread')).toBe(true);
    const stranger = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: other.token, body: { option: 'yes' } });
    expect(stranger.json<{ code: string; to: string }>()).toMatchObject({ code: 'not_addressee', to: 'role:member' });
    const answered = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: member2.token, body: { option: 'yes' } });
    expect(answered.status, answered.body).toBe(200);
    expect(await askItem(member1, made.id, 'done')).toBe(true);
  });

  it('refuses a role no one holds, and a name that is no role', async () => {
    const task = await claimedTask('nobody holds it');
    const post = (body: Record<string, unknown>) => t.request('POST', `/api/v1/tasks/${task.id}/asks`, { token: agent.token, body: { question: 'Anyone?', to: 'alice', timeout_s: 60, default: { text: 'no' }, ...body } });
    const nobody = await post({ to: 'role:viewer' });
    expect(nobody.status).toBe(422);
    expect(nobody.json<{ code: string; hint: string; errors: { pointer: string }[] }>()).toMatchObject({ code: 'no_role_holder', errors: [{ pointer: '/to' }] });
    expect(nobody.json<{ hint: string }>().hint).toMatch(/role/);
    // It says which roles would do: those some enabled human holds (the owner's at least).
    const { held_roles: held, detail } = nobody.json<{ held_roles: string[]; detail: string }>();
    expect(held).toContain('owner');
    expect(held).not.toContain('viewer');
    expect(detail).toContain(`roles held here: ${held.join(', ')}`);
    const later = await post({ escalation: ['role:viewer'] });
    expect(later.json<{ code: string; errors: { pointer: string }[] }>()).toMatchObject({ code: 'no_role_holder', errors: [{ pointer: '/escalation/0' }] });
    const bogus = await post({ to: 'role:boss' });
    expect(bogus.json<{ code: string }>().code).toBe('validation_failed');
  });
});

describe('inbox and mentions', () => {
  it('a mention by another lands in the inbox and is acknowledged; one’s own mention does not', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'mention me' } })).json<{ id: string }>();
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { token: human.token, body: { body: '@asker-bot please look' } })).status).toBe(201);
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { token: agent.token, body: { body: 'note to self @asker-bot' } })).status).toBe(201);
    const inbox = (await t.request('GET', `/api/v1/inbox?kind=mention&task_id=${task.id}`, { token: agent.token })).json<{ data: { id: string; by: string; state: string }[] }>();
    expect(inbox.data).toEqual([expect.objectContaining({ by: human.id, state: 'unread' })]);
    const id = inbox.data[0]?.id ?? '';
    const marked = await t.request('POST', '/api/v1/inbox/mark', { token: agent.token, body: { ids: [id], state: 'done' } });
    expect(marked.status, marked.body).toBe(200);
    expect(marked.json<{ items: { state: string }[] }>().items).toEqual([expect.objectContaining({ state: 'done' })]);
    // Someone else's item is not changed.
    const foreign = await t.request('POST', '/api/v1/inbox/mark', { token: human.token, body: { ids: [id], state: 'unread' } });
    expect(foreign.json<{ items: unknown[] }>().items).toEqual([]);
  });
});

describe('mentions in answers and review notes wake the agent', () => {
  it('an @mention in a free-text answer or a review note reaches the agent by wait and inbox', async () => {
    const helper = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:claim', 'events:read'], name: 'helper-bot' });
    const cursor = (await t.request('GET', '/api/v1/wait?timeout_s=0&work=no', { token: helper.token })).json<{ cursor: string }>().cursor;
    const task = await claimedTask('mention in answers');
    const made = await ask(task.id, { options: [], default: { text: 'wait' } });
    const answered = await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { text: 'Yes; @helper-bot can pair on it' } });
    expect(answered.status, answered.body).toBe(200);
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { token: agent.token, body: { summary: 'done' } })).status).toBe(200);
    const sent = await t.request('POST', `/api/v1/tasks/${task.id}/review`, { token: human.token, body: { decision: 'request_changes', comment: '@helper-bot please check the tests' } });
    expect(sent.status, sent.body).toBe(200);
    const woke = (await t.request('GET', `/api/v1/wait?timeout_s=30&work=no&after=${encodeURIComponent(cursor)}`, { token: helper.token })).json<{ items: { type: string; task_id: string }[] }>();
    expect(woke.items.filter((i) => i.type === 'comment.mentioned').map((i) => i.task_id)).toEqual([task.id, task.id]);
    const inbox = (await t.request('GET', `/api/v1/inbox?kind=mention&task_id=${task.id}`, { token: helper.token })).json<{ data: { by: string; excerpt: string }[] }>().data;
    expect(inbox.map((i) => i.excerpt).sort()).toEqual(['@helper-bot please check the tests', 'Yes; @helper-bot can pair on it']);
    expect(inbox.every((i) => i.by === human.id)).toBe(true);
  });
});

describe('inbox items for people', () => {
  type Item = { kind: string; task_id: string; ref_id: string; by: string; state: string; excerpt: string };
  const items = async (who: { token: string }, query: string) => (await t.request('GET', `/api/v1/inbox?limit=100&${query}`, { token: who.token })).json<{ data: Item[] }>().data;
  const comment = async (who: { token: string }, taskId: string, body: string) => {
    const res = await t.request('POST', `/api/v1/tasks/${taskId}/comments`, { token: who.token, body: { body } });
    expect(res.status, res.body).toBe(201);
    return res.json<{ id: string }>();
  };

  it('a comment in a thread a human wrote in is a reply for them; not for its author, nor for whom it mentions', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'a thread' } })).json<{ id: string }>();
    await comment(human, task.id, 'First thoughts.');
    expect(await items(human, `kind=reply&task_id=${task.id}`)).toEqual([]);
    const bobs = await comment(other, task.id, 'I disagree.');
    expect(await items(human, `kind=reply&task_id=${task.id}`)).toEqual([expect.objectContaining({ ref_id: bobs.id, by: other.id, state: 'unread', excerpt: 'I disagree.' })]);
    expect(await items(other, `kind=reply&task_id=${task.id}`)).toEqual([]);
    // Alice answers and mentions Bob: a mention for him, not also a reply.
    await comment(human, task.id, '@bob see above');
    expect(await items(other, `kind=reply&task_id=${task.id}`)).toEqual([]);
    expect((await items(other, `kind=mention&task_id=${task.id}`)).map((i) => i.by)).toEqual([human.id]);
    // An agent's comment is a reply for both humans; the agent, whose own comments are not human, gets none.
    const bots = await comment(agent, task.id, 'Noted.');
    expect((await items(human, `kind=reply&task_id=${task.id}`)).map((i) => i.ref_id)).toContain(bots.id);
    expect((await items(other, `kind=reply&task_id=${task.id}`)).map((i) => i.ref_id)).toEqual([bots.id]);
    expect(await items(agent, `kind=reply&task_id=${task.id}`)).toEqual([]);
  });

  it("a task assigned to a human changed by another is a changed item for them; their own change is not", async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'mine to do' } })).json<{ id: string }>();
    const assigned = await t.request('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: human.id } });
    expect(assigned.status, assigned.body).toBe(200);
    expect((await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { labels: ['urgent'] } })).status).toBe(200);
    expect((await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'blocked' } })).status).toBe(200);
    const changed = await items(human, `kind=changed&task_id=${task.id}`);
    expect(changed.map((i) => i.excerpt)).toEqual(['todo → blocked: mine to do', 'labels: mine to do']);
    expect(changed.every((i) => i.by !== human.id && i.ref_id === task.id)).toBe(true);
    expect((await t.request('PATCH', `/api/v1/tasks/${task.id}`, { token: human.token, body: { status: 'todo' } })).status).toBe(200);
    expect(await items(human, `kind=changed&task_id=${task.id}`)).toHaveLength(2);
  });

  it('work handed in waits in the inbox of each human who may review it, and turns done once reviewed', async () => {
    const task = await claimedTask('review me');
    const handIn = await t.request('POST', `/api/v1/tasks/${task.id}/hand_in`, { token: agent.token, body: { summary: 'Fixed it; run the suite.' } });
    expect(handIn.status, handIn.body).toBe(200);
    for (const who of [human, other]) {
      expect(await items(who, `kind=to_review&task_id=${task.id}`)).toEqual([expect.objectContaining({ ref_id: task.id, by: agent.id, state: 'unread', excerpt: 'Fixed it; run the suite.' })]);
    }
    // The agent, which may not review (and handed it in), gets none.
    expect(await items(agent, `kind=to_review&task_id=${task.id}`)).toEqual([]);
    const approved = await t.request('POST', `/api/v1/tasks/${task.id}/review`, { token: human.token, body: { decision: 'approve' } });
    expect(approved.status, approved.body).toBe(200);
    for (const who of [human, other]) expect((await items(who, `kind=to_review&task_id=${task.id}`)).map((i) => i.state)).toEqual(['done']);
  });
});

describe('wait', () => {
  it('returns at once with what arrived after the cursor, then blocks until the next thing; nothing is missed', async () => {
    const first = (await t.request('GET', '/api/v1/wait?timeout_s=0&work=no', { token: agent.token })).json<{ cursor: string; timed_out: boolean }>();
    expect(first.timed_out).toBe(true);
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'wake me' } })).json<{ id: string }>();
    // Arrives between two waits: the next wait from the cursor returns it at once.
    await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { token: human.token, body: { body: 'hey @asker-bot' } });
    const second = await t.request('GET', `/api/v1/wait?timeout_s=30&work=no&after=${encodeURIComponent(first.cursor)}`, { token: agent.token });
    const body = second.json<{ items: { type: string; task_id: string; by: string }[]; cursor: string; timed_out: boolean }>();
    expect(body.timed_out).toBe(false);
    expect(body.items).toEqual([expect.objectContaining({ type: 'comment.mentioned', task_id: task.id, by: human.id })]);
    // The next wait blocks until an answer to the agent's ask arrives.
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} })).status).toBe(200);
    const made = await ask(task.id, {});
    const waiting = t.request('GET', `/api/v1/wait?timeout_s=30&work=no&after=${encodeURIComponent(body.cursor)}`, { token: agent.token });
    await t.request('POST', `/api/v1/asks/${made.id}/answer`, { token: human.token, body: { option: 'no' } });
    const woke = (await waiting).json<{ items: { type: string; data: { ask_id?: string } }[] }>();
    expect(woke.items).toEqual([expect.objectContaining({ type: 'ask.answered', data: expect.objectContaining({ ask_id: made.id }) as unknown })]);
  });

  it('reports work the agent may claim', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'claim me', priority: 'urgent' } })).json<{ id: string }>();
    const res = (await t.request('GET', '/api/v1/wait?timeout_s=0', { token: agent.token })).json<{ work: { task_id: string } | null; timed_out: boolean }>();
    expect(res.timed_out).toBe(false);
    expect(res.work?.task_id).toBeDefined();
    expect(typeof task.id).toBe('string');
  });
});
