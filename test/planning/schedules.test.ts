import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectProblem } from '../rest/fixtures.ts';
import { engine } from '../harness.ts';
import { type Cluster, CRON_SECRET, eventsSettled, startInstances, sweep, testClock, WORKER_SCOPES } from '../leases/instances.ts';

/**
 * Recurring work (issue 42 §2), through REST, with the servers' clock moved by the test and every
 * maintenance pass run on demand (`/cron/keepalive`): on PostgreSQL two instances pass at once.
 */
const INSTANCES = engine === 'postgres' ? 2 : 1;

interface Schedule {
  id: string;
  next_runs: string[];
  held: string | null;
  last_task_id: string | null;
  version: number;
}
interface Task {
  id: string;
  title: string;
  status: string;
  labels: string[];
  created_at: string;
}

describe('schedules', () => {
  const clock = testClock();
  let c: Cluster;
  beforeAll(async () => {
    c = await startInstances(INSTANCES, { sweepIntervalMs: 0, webhookIntervalMs: 0, cronSecret: CRON_SECRET }, clock);
  });
  afterAll(() => c.close());

  /** Every instance passes at once, twice: an occurrence must still make one task. */
  const passAll = async () => {
    await Promise.all(Array.from({ length: INSTANCES }, (_, via) => sweep(c, via)));
    await Promise.all(Array.from({ length: INSTANCES }, (_, via) => sweep(c, via)));
  };
  const create = async (body: Record<string, unknown>) => {
    const res = await c.request('POST', '/api/v1/schedules', { body });
    expect(res.status, res.body).toBe(201);
    return res.json<Schedule>();
  };
  const tasksLabelled = async (label: string) => (await c.request('GET', `/api/v1/tasks?labels=${label}&status=todo,in_progress,done,cancelled&limit=100&view=full`)).json<{ data: Task[] }>().data;

  it('a daily 09:00 in Berlin makes exactly one task a day across the spring daylight-saving change, on every instance', async () => {
    clock.setPast('2026-03-26T12:00:00.000Z', 0);
    const schedule = await create({ name: 'standup notes', cron: '0 9 * * *', time_zone: 'Europe/Berlin', task: { title: 'Write the standup notes', labels: ['dst-daily'] }, overlap: 'always' });
    expect(schedule.next_runs.slice(0, 4)).toEqual(['2026-03-27T08:00:00.000Z', '2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    for (const due of schedule.next_runs.slice(0, 4)) {
      clock.setPast(due, 30_000);
      await passAll();
    }
    const made = await tasksLabelled('dst-daily');
    expect(made).toHaveLength(4);
    expect(made.every((task) => task.title === 'Write the standup notes')).toBe(true);
    // On a shared PostgreSQL another test's open transaction may hold the newest events back from cursors for a while.
    await eventsSettled(c);
    const events = (await c.request('GET', `/api/v1/events?types=task.created&limit=100&view=full`)).json<{ data: { subject: string; machine: string | null; actor: { kind: string } }[] }>().data;
    expect(events.filter((e) => made.some((task) => task.id === e.subject)).map((e) => e.machine)).toEqual(Array(4).fill(`schedule:${schedule.id}`));
  });

  it('the autumn change: 02:30, an hour that happens twice, makes one task', async () => {
    clock.setPast('2026-10-24T12:00:00.000Z', 0);
    const schedule = await create({ name: 'nightly', cron: '30 2 * * *', time_zone: 'Europe/Berlin', task: { title: 'Nightly check', labels: ['dst-autumn'] }, overlap: 'always' });
    expect(schedule.next_runs.slice(0, 2)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
    for (const offset of [0, 30 * 60_000, 60 * 60_000, 90 * 60_000]) {
      clock.setPast('2026-10-25T00:30:00.000Z', offset);
      await passAll();
    }
    expect(await tasksLabelled('dst-autumn')).toHaveLength(1);
  });

  it('overlap skip makes nothing while the last task is open; coalesce holds one occurrence until it closes', async () => {
    clock.setPast('2026-06-01T00:00:00.000Z', 0);
    const skip = await create({ name: 'hourly skip', cron: '0 * * * *', task: { title: 'Hourly skip', labels: ['overlap-skip'] }, overlap: 'skip' });
    const coalesce = await create({ name: 'hourly coalesce', cron: '0 * * * *', task: { title: 'Hourly coalesce', labels: ['overlap-coalesce'] }, overlap: 'coalesce' });
    for (const hour of [1, 2, 3]) {
      clock.setPast(`2026-06-01T0${hour}:00:00.000Z`, 1_000);
      await passAll();
    }
    expect(await tasksLabelled('overlap-skip')).toHaveLength(1);
    const held = (await c.request('GET', `/api/v1/schedules/${coalesce.id}`)).json<Schedule>();
    expect(held.held).toBe('2026-06-01T02:00:00.000Z');
    const [first] = await tasksLabelled('overlap-coalesce');
    expect(first).toBeDefined();
    const done = await c.request('PATCH', `/api/v1/tasks/${first?.id}`, { body: { status: 'cancelled' } });
    expect(done.status, done.body).toBe(200);
    await passAll();
    expect(await tasksLabelled('overlap-coalesce')).toHaveLength(2);
    expect((await c.request('GET', `/api/v1/schedules/${coalesce.id}`)).json<Schedule>().held).toBeNull();
    await eventsSettled(c);
    const skipped = (await c.request('GET', `/api/v1/events?types=schedule.skipped&limit=100`)).json<{ data: { subject: string; data: { reason: string } }[] }>().data;
    expect(skipped.filter((e) => e.subject === skip.id).map((e) => e.data.reason)).toEqual(['last_task_open', 'last_task_open']);
  });

  it('after downtime, missed occurrences are skipped, or the latest catch_up of them made', async () => {
    clock.setPast('2026-07-01T00:00:00.000Z', 0);
    await create({ name: 'daily skip', cron: '0 6 * * *', task: { title: 'Daily', labels: ['catchup-none'] }, overlap: 'always' });
    await create({ name: 'daily catch up', cron: '0 6 * * *', task: { title: 'Daily', labels: ['catchup-two'] }, overlap: 'always', catch_up: 2 });
    clock.setPast('2026-07-05T12:00:00.000Z', 0);
    await passAll();
    expect(await tasksLabelled('catchup-none')).toHaveLength(0);
    expect(await tasksLabelled('catchup-two')).toHaveLength(2);
  });

  it('refuses a bad expression or zone at the member, pauses and resumes, and deletes', async () => {
    clock.setPast('2026-08-01T00:00:00.000Z', 0);
    const bad = expectProblem(await c.request('POST', '/api/v1/schedules', { body: { name: 'x', cron: 'every day at nine', task: { title: 'x' } } }), 400, 'validation_failed');
    expect(bad).toMatchObject({ errors: [{ pointer: '/cron' }] });
    const zone = expectProblem(await c.request('POST', '/api/v1/schedules', { body: { name: 'x', cron: '0 9 * * *', time_zone: 'Mars/Olympus', task: { title: 'x' } } }), 400, 'validation_failed');
    expect(zone).toMatchObject({ errors: [{ pointer: '/time_zone' }] });
    const schedule = await create({ name: 'paused', cron: '0 9 * * *', task: { title: 'Paused work', labels: ['paused'] } });
    const paused = (await c.request('PATCH', `/api/v1/schedules/${schedule.id}`, { body: { enabled: false } })).json<Schedule>();
    expect(paused.next_runs).toEqual([]);
    clock.setPast('2026-08-03T09:00:00.000Z', 0);
    await passAll();
    expect(await tasksLabelled('paused')).toHaveLength(0);
    const resumed = (await c.request('PATCH', `/api/v1/schedules/${schedule.id}`, { body: { enabled: true } })).json<Schedule>();
    expect(resumed.next_runs[0]).toBe('2026-08-04T09:00:00.000Z');
    const agent = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    expectProblem(await c.request('DELETE', `/api/v1/schedules/${schedule.id}`, { token: agent.token }), 403, 'not_schedule_owner');
    expect((await c.request('DELETE', `/api/v1/schedules/${schedule.id}`)).status).toBe(200);
    expectProblem(await c.request('GET', `/api/v1/schedules/${schedule.id}`), 404, 'not_found');
  });

  it('a schedule of a template makes its whole graph once per occurrence, with its params; a deleted template skips the occurrence, recorded', async () => {
    clock.setPast('2026-09-01T00:00:00.000Z', 0);
    const made = await c.request('POST', '/api/v1/templates', {
      body: {
        name: 'Weekly report',
        parameters: [{ name: 'team' }],
        tasks: [
          { key: 'report', title: 'Weekly report for {{team}}', labels: ['graph-weekly'] },
          { key: 'numbers', title: 'Collect the numbers', labels: ['graph-weekly'], parent: 'report' },
          { key: 'send', title: 'Send it to {{team}}', labels: ['graph-weekly'], parent: 'report', blocked_by: ['numbers'] },
        ],
      },
    });
    expect(made.status, made.body).toBe(201);
    const template = made.json<{ id: string }>();
    // The template must exist and the params fit it; a schedule makes a task or a template, not both.
    const unfit = expectProblem(await c.request('POST', '/api/v1/schedules', { body: { name: 'x', cron: '0 9 * * *', template: { id: template.id, params: { colour: 'red' } } } }), 400, 'validation_failed');
    expect((unfit.errors as { pointer: string }[]).map((e) => e.pointer).sort()).toEqual(['/template/params/colour', '/template/params/team']);
    expectProblem(await c.request('POST', '/api/v1/schedules', { body: { name: 'x', cron: '0 9 * * *', task: { title: 'x' }, template: { id: template.id } } }), 400, 'validation_failed');

    const schedule = await create({ name: 'weekly report', cron: '0 9 * * 1', time_zone: 'Europe/Berlin', template: { id: template.id, params: { team: 'payments' } }, overlap: 'always' });
    expect(schedule).toMatchObject({ task: null, template: { id: template.id, params: { team: 'payments' } } });
    for (const due of schedule.next_runs.slice(0, 2)) {
      clock.setPast(due, 30_000);
      await passAll();
    }
    const tasks = await tasksLabelled('graph-weekly');
    expect(tasks.map((task) => task.title).sort()).toEqual(['Collect the numbers', 'Collect the numbers', 'Send it to payments', 'Send it to payments', 'Weekly report for payments', 'Weekly report for payments']);
    const after = (await c.request('GET', `/api/v1/schedules/${schedule.id}`)).json<Schedule>();
    // The task overlap watches is the graph's first, its top-level report.
    expect(tasks.find((task) => task.id === after.last_task_id)?.title).toBe('Weekly report for payments');
    const instantiated = (await c.request('GET', `/api/v1/events?types=template.instantiated&subject=${template.id}&limit=10&view=full`)).json<{ data: { machine: string | null; idempotency_key: string | null }[] }>().data;
    expect(instantiated.map((e) => e.machine)).toEqual([`schedule:${schedule.id}`, `schedule:${schedule.id}`]);

    expect((await c.request('DELETE', `/api/v1/templates/${template.id}`)).status).toBe(200);
    clock.setPast(after.next_runs[0] ?? '', 30_000);
    await passAll();
    expect(await tasksLabelled('graph-weekly')).toHaveLength(6);
    const moved = (await c.request('GET', `/api/v1/schedules/${schedule.id}`)).json<Schedule>();
    expect(moved.next_runs[0]).not.toBe(after.next_runs[0]);
    const skipped = (await c.request('GET', `/api/v1/events?types=schedule.skipped&subject=${schedule.id}&limit=10`)).json<{ data: { data: { reason: string; code: string; occurrences: string[] } }[] }>().data;
    expect(skipped.map((e) => e.data)).toEqual([expect.objectContaining({ reason: 'refused', code: 'not_found', occurrences: [after.next_runs[0]] })]);
  });

  it("makes each occurrence with its creator's scopes as they are now: one who lost tasks:write has it refused, recorded", async () => {
    clock.setPast('2026-11-02T00:00:00.000Z', 0);
    const creator = await c.addPrincipal({ kind: 'agent', scopes: WORKER_SCOPES });
    const made = await c.request('POST', '/api/v1/schedules', { token: creator.token, body: { name: 'agent hourly', cron: '0 * * * *', task: { title: 'Agent hourly', labels: ['lost-scope'] }, overlap: 'always' } });
    expect(made.status, made.body).toBe(201);
    const schedule = made.json<Schedule>();
    clock.setPast(schedule.next_runs[0] ?? '', 1_000);
    await passAll();
    expect(await tasksLabelled('lost-scope')).toHaveLength(1);
    const narrowed = await c.request('PATCH', `/api/v1/agents/${creator.id}`, { body: { scopes: ['tasks:read'] } });
    expect(narrowed.status, narrowed.body).toBe(200);
    clock.setPast(schedule.next_runs[1] ?? '', 1_000);
    await passAll();
    expect(await tasksLabelled('lost-scope')).toHaveLength(1);
    await eventsSettled(c);
    const skipped = (await c.request('GET', `/api/v1/events?types=schedule.skipped&subject=${schedule.id}&limit=10`)).json<{ data: { data: { reason: string; code: string } }[] }>().data;
    expect(skipped.map((e) => e.data)).toEqual([expect.objectContaining({ reason: 'refused', code: 'forbidden_scope' })]);
  });
});
