import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphql } from '../graphql/client.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';

/** Templates (issue 42 §3), through REST and GraphQL, on the engine of the run. */

interface Instantiation {
  template_id: string;
  dry_run: boolean;
  task_ids: Record<string, string>;
  tasks: { key: string; id: string | null; title: string; labels: string[]; assignee: string | null; parent: string | null; blocked_by: string[]; not_before: string | null; approval: boolean }[];
}
interface Task {
  id: string;
  title: string;
  status: string;
  labels: string[];
  blocked_by: string[];
  parent_id: string | null;
  not_before: string | null;
  due_at: string | null;
  assignee: { id: string } | null;
}

const RELEASE = {
  name: 'Release',
  parameters: [
    { name: 'version', description: 'The version to release, e.g. 1.4.0' },
    { name: 'area', type: 'enum', values: ['web', 'api'], default: 'web' },
    { name: 'days', type: 'number', default: 2 },
  ],
  tasks: [
    { key: 'release', title: 'Release {{version}}', labels: ['release', 'area:{{area}}'], priority: 'high' },
    { key: 'notes', title: 'Write the notes for {{ version }}', description: 'Within {{days}} days.', parent: 'release' },
    { key: 'approve', title: 'Approve {{version}}', parent: 'release', approval: true },
    { key: 'ship', title: 'Ship {{version}}', parent: 'release', blocked_by: ['notes', 'approve'], not_before_s: 3600, due_s: 86400 },
  ],
};

describe('templates', () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(() => t.close());

  const create = async (body: unknown) => {
    const res = await t.request('POST', '/api/v1/templates', { body });
    expect(res.status, res.body).toBe(201);
    return res.json<{ id: string; version: number }>();
  };
  const tasksLabelled = async (label: string) => (await t.request('GET', `/api/v1/tasks?labels=${label}&status=todo,in_review&limit=100&view=full`)).json<{ data: Task[] }>().data;
  const taskCount = async () => (await t.request('GET', '/api/v1/tasks?status=todo,in_progress,in_review,blocked,done,cancelled&limit=100')).json<{ data: unknown[] }>().data.length;

  it('makes the whole graph: parameters rendered, subtasks, blockers by id, a timer and an approval gate in review', async () => {
    const template = await create(RELEASE);
    const res = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: '1.4.0' } } });
    expect(res.status, res.body).toBe(201);
    const made = res.json<Instantiation>();
    expect(Object.keys(made.task_ids).sort()).toEqual(['approve', 'notes', 'release', 'ship']);
    const get = async (key: string) => (await t.request('GET', `/api/v1/tasks/${made.task_ids[key]}?view=full`)).json<Task>();
    const [release, notes, approve, ship] = await Promise.all(['release', 'notes', 'approve', 'ship'].map(get));
    expect(release).toMatchObject({ title: 'Release 1.4.0', labels: ['release', 'area:web'], parent_id: null, status: 'todo' });
    expect(notes).toMatchObject({ title: 'Write the notes for 1.4.0', parent_id: release?.id });
    expect(approve).toMatchObject({ status: 'in_review', parent_id: release?.id });
    expect(ship?.blocked_by.sort()).toEqual([made.task_ids.notes, made.task_ids.approve].sort());
    expect(ship?.not_before).not.toBeNull();
    expect(new Date(ship?.due_at ?? 0).getTime() - new Date(ship?.not_before ?? 0).getTime()).toBe(86_400_000 - 3_600_000);
    // The approval gate opens when a human approves it.
    const approved = await t.request('POST', `/api/v1/tasks/${made.task_ids.approve}/review`, { body: { decision: 'approve' } });
    expect(approved.json<Task>().status).toBe('done');
    expect((await get('ship'))?.blocked_by).toContain(made.task_ids.approve);
  });

  it('the same Idempotency-Key answers the same ids and makes nothing twice', async () => {
    const template = await create({ ...RELEASE, tasks: RELEASE.tasks.map((task) => ({ ...task, labels: ['idem'] })) });
    const send = () => t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: '2.0.0' } }, key: 'release-2.0.0' });
    const [first, second] = await Promise.all([send(), send()]);
    const answers = [first, second].filter((r) => r.status === 201);
    expect(answers.length).toBeGreaterThanOrEqual(1);
    const third = await send();
    expect(third.status).toBe(201);
    expect(third.headers['idempotency-replayed']).toBe('true');
    for (const r of answers) expect(r.json<Instantiation>().task_ids).toEqual(third.json<Instantiation>().task_ids);
    expect(await tasksLabelled('idem')).toHaveLength(4);
    const reused = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: '2.0.1' } }, key: 'release-2.0.0' });
    expectProblem(reused, 422, 'idempotency_key_reused');
  });

  it('makes every task or none: a refusal at the last task leaves no task and no event behind', async () => {
    const template = await create({
      name: 'Fails late',
      parameters: [{ name: 'owner' }],
      tasks: [...Array.from({ length: 30 }, (_, i) => ({ key: `step-${i}`, title: `Step ${i}`, labels: ['late'], ...(i > 0 ? { blocked_by: [`step-${i - 1}`] } : {}) })), { key: 'last', title: 'Last', labels: ['late'], assignee: '{{owner}}', blocked_by: ['step-29'] }],
    });
    const before = await taskCount();
    const events = async () => (await t.request('GET', '/api/v1/events?types=task.created,template.instantiated&limit=100')).json<{ data: unknown[] }>().data.length;
    const eventsBefore = await events();
    const res = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { owner: 'agt_01ARZ3NDEKTSV4RRFFQ69G5FAV' } } });
    const problem = expectProblem(res, 422, 'unknown_principal');
    expect(problem.detail).toContain('Template task last');
    expect(problem.errors).toEqual([{ pointer: '/tasks/30/assignee', detail: 'no such principal', location: 'body' }]);
    expect(await taskCount()).toBe(before);
    expect(await tasksLabelled('late')).toHaveLength(0);
    expect(await events()).toBe(eventsBefore);
  });

  it('a principal parameter is a role filled at instantiation: by name or id, assigned by id, named in texts; empty leaves the task unassigned', async () => {
    const reviewer = await t.addPrincipal({ kind: 'human', name: 'Rhea Reviewer' });
    const template = await create({
      name: 'Reviewed change',
      parameters: [{ name: 'reviewer', type: 'principal' }, { name: 'oncall', type: 'principal', required: false }],
      tasks: [
        { key: 'review', title: 'Review, by {{reviewer}}', assignee: '{{reviewer}}', approval: true, labels: ['roles'] },
        { key: 'watch', title: 'Watch the rollout', assignee: '{{oncall}}', labels: ['roles'] },
      ],
    });
    const instantiate = (params: Record<string, string>) => t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params } });
    const res = await instantiate({ reviewer: '@rhea reviewer' });
    expect(res.status, res.body).toBe(201);
    const made = res.json<Instantiation>();
    expect(made.tasks.map((task) => [task.key, task.title, task.assignee])).toEqual([
      ['review', 'Review, by Rhea Reviewer', reviewer.id],
      ['watch', 'Watch the rollout', null],
    ]);
    const review = (await t.request('GET', `/api/v1/tasks/${made.task_ids.review}?view=full`)).json<Task>();
    expect(review).toMatchObject({ status: 'in_review', assignee: { id: reviewer.id } });
    const event = (await t.request('GET', `/api/v1/events?types=template.instantiated&subject=${template.id}`)).json<{ data: { data: { params: Record<string, string> } }[] }>().data;
    expect(event[0]?.data.params).toMatchObject({ reviewer: reviewer.id });
    // An id works too; a name no principal has is refused at its parameter, before anything is made.
    expect((await instantiate({ reviewer: reviewer.id, oncall: reviewer.id })).status).toBe(201);
    const unknown = expectProblem(await instantiate({ reviewer: 'nobody-here' }), 422, 'unknown_principal');
    expect(unknown.errors).toEqual([expect.objectContaining({ pointer: '/params/reviewer' })]);
  });

  it('refuses parameters that do not fit, naming each', async () => {
    const template = await create(RELEASE);
    const res = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { area: 'db', days: 'soon', colour: 'red' } } });
    const problem = expectProblem(res, 400, 'validation_failed');
    const pointers = (problem.errors as { pointer: string }[]).map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/params/area', '/params/colour', '/params/days', '/params/version']);
    // A number given as its text (a query string's, the CLI's) is a number.
    const ok = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: '3', days: '5' }, dry_run: true } });
    expect(ok.status, ok.body).toBe(201);
    // A rendered title past the task limit is refused at the task.
    const long = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: 'v'.repeat(200) } } });
    expect((expectProblem(long, 400, 'validation_failed').errors as { pointer: string }[])[0]?.pointer).toBe('/tasks/0/title');
  });

  it('a dry run answers the rendered graph and writes nothing', async () => {
    const template = await create({ ...RELEASE, tasks: RELEASE.tasks.map((task) => ({ ...task, labels: ['dry'] })) });
    const before = await taskCount();
    const res = await t.request('POST', `/api/v1/templates/${template.id}/instantiate`, { body: { params: { version: '9.9.9', area: 'api' }, dry_run: true } });
    expect(res.status, res.body).toBe(201);
    const preview = res.json<Instantiation>();
    expect(preview.dry_run).toBe(true);
    expect(preview.task_ids).toEqual({});
    expect(preview.tasks.map((task) => [task.key, task.title, task.id])).toEqual([
      ['release', 'Release 9.9.9', null],
      ['notes', 'Write the notes for 9.9.9', null],
      ['approve', 'Approve 9.9.9', null],
      ['ship', 'Ship 9.9.9', null],
    ]);
    expect(preview.tasks[3]).toMatchObject({ parent: 'release', blocked_by: ['notes', 'approve'] });
    expect(await taskCount()).toBe(before);
  });

  it('refuses a template whose blockers or parents make a cycle, naming it, and unknown references', async () => {
    const cycle = await t.request('POST', '/api/v1/templates', {
      body: { name: 'loop', tasks: [{ key: 'a', title: 'A', blocked_by: ['c'] }, { key: 'b', title: 'B', blocked_by: ['a'] }, { key: 'c', title: 'C', blocked_by: ['b'] }] },
    });
    expect(expectProblem(cycle, 422, 'blocked_by_cycle').cycle).toEqual(['a', 'c', 'b', 'a']);
    const tree = await t.request('POST', '/api/v1/templates', { body: { name: 'tree loop', tasks: [{ key: 'a', title: 'A', parent: 'b' }, { key: 'b', title: 'B', parent: 'a' }] } });
    expectProblem(tree, 422, 'parent_cycle');
    const unknown = await t.request('POST', '/api/v1/templates', {
      body: { name: 'unknown', parameters: [{ name: 'x' }], tasks: [{ key: 'a', title: '{{y}} and {{x}}', parent: 'zz', blocked_by: ['nope'] }] },
    });
    const pointers = (expectProblem(unknown, 400, 'validation_failed').errors as { pointer: string }[]).map((e) => e.pointer).sort();
    expect(pointers).toEqual(['/tasks/0/blocked_by/0', '/tasks/0/parent', '/tasks/0/title']);
    const tooMany = await t.request('POST', '/api/v1/templates', { body: { name: 'big', tasks: Array.from({ length: 101 }, (_, i) => ({ key: `t${i}`, title: `T${i}` })) } });
    expectProblem(tooMany, 400, 'validation_failed');
    // An update is checked the same way, and needs the current version.
    const template = await create(RELEASE);
    const looped = await t.request('PATCH', `/api/v1/templates/${template.id}`, { body: { tasks: [{ key: 'a', title: 'A', blocked_by: ['a'] }] }, ifMatch: `"${template.version}"` });
    expectProblem(looped, 422, 'blocked_by_cycle');
    const renamed = await t.request('PATCH', `/api/v1/templates/${template.id}`, { body: { name: 'Release train' }, ifMatch: `"${template.version}"` });
    expect(renamed.json<{ name: string; version: number }>()).toMatchObject({ name: 'Release train', version: template.version + 1 });
    expectProblem(await t.request('PATCH', `/api/v1/templates/${template.id}`, { body: { name: 'Late' }, ifMatch: `"${template.version}"` }), 409, 'conflict_version');
  });

  it('is served over GraphQL from the registry', async () => {
    const template = await create(RELEASE);
    const res = await graphql<{ instantiateTemplate: { task_ids: Record<string, string> } }>(t, 'mutation($id: ID!) { instantiateTemplate(id: $id, params: {version: "5.0"}, idempotency_key: "gql-5") { task_ids } }', {
      variables: { id: template.id },
    });
    expect(res.errors, JSON.stringify(res.errors)).toBeUndefined();
    expect(Object.keys(res.data?.instantiateTemplate.task_ids ?? {})).toHaveLength(4);
  });
});
