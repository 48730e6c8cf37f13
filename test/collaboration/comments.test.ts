import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { createTask, eventsOf, expectProblem } from '../rest/fixtures.ts';
import { eventsSettled } from '../leases/instances.ts';

interface Comment {
  id: string;
  task_id: string;
  body: string | null;
  truncated?: boolean;
  mentions: string[];
  artifacts: string[];
  author: { id: string; kind: string };
  version: number;
  deleted_at: string | null;
}
interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
  sync_cursor: string | null;
}

let t: TestServer;
let agent: Principal;
let other: Principal;
let human: Principal;
beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0 });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'], name: 'builder-bot' });
  other = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'], name: 'other-bot' });
  human = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'], name: 'Dana' });
});
afterAll(() => t.close());

function post(taskId: string, body: Record<string, unknown>, options: { token?: string; key?: string } = {}) {
  return t.request('POST', `/api/v1/tasks/${taskId}/comments`, { body, ...options });
}

describe('comments_create', () => {
  it('posts a Markdown comment into the thread and the timeline (201)', async () => {
    const task = await createTask(t);
    const res = await post(task.id, { body: 'Looks **good**' }, { token: agent.token });
    expect(res.status, res.body).toBe(201);
    const comment = res.json<Comment>();
    expect(comment).toMatchObject({ task_id: task.id, body: 'Looks **good**', author: { id: agent.id, kind: 'agent' }, version: 1, deleted_at: null, mentions: [] });
    expect(comment.id).toMatch(/^cmt_/);
    const created = (await eventsOf(t, task.id)).filter((e) => e.type === 'comment.created');
    expect(created).toHaveLength(1);
    expect(created[0]).toMatchObject({ actor_id: agent.id, data: { comment_id: comment.id, body: 'Looks **good**' } });
  });

  it('posts once when an agent retries with the same Idempotency-Key', async () => {
    const task = await createTask(t);
    const key = randomUUID();
    const first = await post(task.id, { body: 'once' }, { token: agent.token, key });
    const again = await post(task.id, { body: 'once' }, { token: agent.token, key });
    expect(again.status).toBe(201);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(again.json<Comment>().id).toBe(first.json<Comment>().id);
    const page = (await t.request('GET', `/api/v1/tasks/${task.id}/comments`)).json<Page<Comment>>();
    expect(page.data).toHaveLength(1);
  });

  it('resolves @mentions to principals, with a comment.mentioned event whose subject is the principal', async () => {
    const task = await createTask(t);
    const res = await post(task.id, { body: `@builder-bot and @dana please look; mail me at x@y.z, \`@not-a-mention\`. Also @${other.id}.` }, { token: human.token });
    expect(res.status, res.body).toBe(201);
    const comment = res.json<Comment>();
    expect(comment.mentions.sort()).toEqual([agent.id, human.id, other.id].sort());
    for (const who of [agent, human, other]) {
      const mentioned = (await eventsOf(t, who.id)).filter((e) => e.type === 'comment.mentioned');
      expect(mentioned.at(-1)).toMatchObject({ subject: who.id, data: { task_id: task.id, comment_id: comment.id } });
    }
  });

  it('mentions a person whose name has spaces or accents (as single sign-on names them) with each space written _', async () => {
    const ada = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read'], name: 'Ada Lovelace' });
    const jose = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read'], name: 'José García' });
    const task = await createTask(t);
    const res = await post(task.id, { body: 'Over to @Ada_Lovelace and @josé_garcía.' }, { token: agent.token });
    expect(res.status).toBe(201);
    expect(res.json<Comment>().mentions.sort()).toEqual([ada.id, jose.id].sort());
    // The first word alone names nobody; the problem says how to spell a name with spaces.
    const problem = expectProblem(await post(task.id, { body: 'ping @Ada' }, { token: agent.token }), 422, 'unknown_principal');
    expect(problem.hint).toContain('@Ada_Lovelace');
  });

  it('refuses an unknown mention with 422 unknown_principal naming it, and writes nothing', async () => {
    const task = await createTask(t);
    const before = await eventsOf(t, task.id);
    const problem = expectProblem(await post(task.id, { body: 'ping @nobody-here' }, { token: agent.token }), 422, 'unknown_principal');
    expect(problem.detail).toContain('@nobody-here');
    expect(problem.errors).toEqual([expect.objectContaining({ pointer: '/body' })]);
    expect(await eventsOf(t, task.id)).toHaveLength(before.length);
  });

  it('validates the body budget and artifact references, naming the field', async () => {
    const task = await createTask(t);
    const long = expectProblem(await post(task.id, { body: 'x'.repeat(4001) }), 400, 'validation_failed');
    expect(JSON.stringify(long.errors)).toContain('/body');
    expectProblem(await post(task.id, { body: '   ' }), 400, 'validation_failed');
    const art = expectProblem(await post(task.id, { body: 'see', artifacts: ['art_01ARZ3NDEKTSV4RRFFQ69G5FAV'] }), 400, 'validation_failed');
    expect(art.errors).toEqual([expect.objectContaining({ pointer: '/artifacts/0' })]);
    const artifact = (await t.request('POST', '/api/v1/artifacts', { body: { content: 'the log', task_id: task.id } })).json<{ id: string }>();
    const ok = await post(task.id, { body: 'see the log', artifacts: [artifact.id] });
    expect(ok.status, ok.body).toBe(201);
    expect(ok.json<Comment>().artifacts).toEqual([artifact.id]);
  });

  it('is 410 task_deleted on a deleted task, 404 on one that never existed', async () => {
    const task = await createTask(t);
    expect((await t.request('DELETE', `/api/v1/tasks/${task.id}`)).status).toBe(200);
    expectProblem(await post(task.id, { body: 'too late' }), 410, 'task_deleted');
    expectProblem(await post('tsk_01ARZ3NDEKTSV4RRFFQ69G5FAV', { body: 'nowhere' }), 404, 'not_found');
  });
});

describe('comments_list', () => {
  it('pages oldest first with a cursor, and `since` returns only what changed', async () => {
    const task = await createTask(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await post(task.id, { body: `c${i}` })).json<Comment>().id);
    // A page's sync_cursor is the newest event cursors may pass: wait until another test's open transaction
    // on a shared PostgreSQL lets them pass these comments' events.
    await eventsSettled(t);
    const first = (await t.request('GET', `/api/v1/tasks/${task.id}/comments?limit=3`)).json<Page<Comment>>();
    expect(first.data.map((c) => c.id)).toEqual(ids.slice(0, 3));
    expect(first.has_more).toBe(true);
    const second = (await t.request('GET', `/api/v1/tasks/${task.id}/comments?limit=3&cursor=${first.next_cursor ?? ''}`)).json<Page<Comment>>();
    expect(second.data.map((c) => c.id)).toEqual(ids.slice(3));
    expect(second.has_more).toBe(false);
    await t.request('PATCH', `/api/v1/comments/${ids[1] ?? ''}`, { body: { body: 'c1, edited' } });
    await eventsSettled(t);
    const delta = (await t.request('GET', `/api/v1/tasks/${task.id}/comments?since=${first.sync_cursor ?? ''}`)).json<Page<Comment>>();
    expect(delta.data.map((c) => c.body)).toEqual(['c1, edited']);
    expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}/comments?cursor=bogus`), 400, 'invalid_parameter');
  });
});

describe('comments_update and comments_delete', () => {
  it('lets the author edit (version and ETag move) and refuses anyone else with 403 not_comment_author', async () => {
    const task = await createTask(t);
    const comment = (await post(task.id, { body: 'draft' }, { token: agent.token })).json<Comment>();
    const edited = await t.request('PATCH', `/api/v1/comments/${comment.id}`, { body: { body: 'final @other-bot' }, token: agent.token, ifMatch: '"1"' });
    expect(edited.status, edited.body).toBe(200);
    expect(edited.headers.etag).toBe('"2"');
    expect(edited.json<Comment>()).toMatchObject({ body: 'final @other-bot', version: 2, mentions: [other.id] });
    expectProblem(await t.request('PATCH', `/api/v1/comments/${comment.id}`, { body: { body: 'stale' }, token: agent.token, ifMatch: '"1"' }), 409, 'conflict_version');
    const refused = expectProblem(await t.request('PATCH', `/api/v1/comments/${comment.id}`, { body: { body: 'mine now' }, token: other.token }), 403, 'not_comment_author');
    expect(refused.author).toEqual({ id: agent.id, kind: 'agent' });
    expect((await eventsOf(t, task.id)).map((e) => e.type).filter((type) => type.startsWith('comment.'))).toEqual(['comment.created', 'comment.updated']);
  });

  it('deletes to a tombstone with a comment.deleted event: never a silent hole', async () => {
    const task = await createTask(t);
    const kept = (await post(task.id, { body: 'first' }, { token: agent.token })).json<Comment>();
    const doomed = (await post(task.id, { body: 'oops' }, { token: agent.token })).json<Comment>();
    expectProblem(await t.request('DELETE', `/api/v1/comments/${doomed.id}`, { token: other.token }), 403, 'not_comment_author');
    const res = await t.request('DELETE', `/api/v1/comments/${doomed.id}`, { token: agent.token });
    expect(res.status, res.body).toBe(200);
    expect(res.json<Comment>()).toMatchObject({ id: doomed.id, body: null });
    const page = (await t.request('GET', `/api/v1/tasks/${task.id}/comments`)).json<Page<Comment>>();
    expect(page.data.map((c) => [c.id, c.body])).toEqual([[kept.id, 'first'], [doomed.id, null]]);
    expect((await eventsOf(t, task.id)).filter((e) => e.type === 'comment.deleted')).toEqual([expect.objectContaining({ data: { comment_id: doomed.id, author: { id: agent.id, kind: 'agent' } } })]);
    expectProblem(await t.request('DELETE', `/api/v1/comments/${doomed.id}`, { token: agent.token }), 409, 'comment_deleted');
    expectProblem(await t.request('PATCH', `/api/v1/comments/${doomed.id}`, { body: { body: 'back' }, token: agent.token }), 409, 'comment_deleted');
  });

  it('lets a human with agents:admin delete anyone\'s comment', async () => {
    const task = await createTask(t);
    const comment = (await post(task.id, { body: 'spam' }, { token: agent.token })).json<Comment>();
    const res = await t.request('DELETE', `/api/v1/comments/${comment.id}`);
    expect(res.status, res.body).toBe(200);
    expect((await t.request('GET', `/api/v1/comments/${comment.id}`)).json<Comment>().deleted_at).not.toBeNull();
  });
});

describe('the discussion in claim and resume answers', () => {
  it('carries the latest 5 human comments, newest first, each cut to 500 characters; agent comments are left out', async () => {
    const task = await createTask(t);
    for (let i = 0; i < 6; i++) await post(task.id, { body: `human ${i} ${'y'.repeat(i === 5 ? 600 : 1)}` }, { token: human.token });
    await post(task.id, { body: 'agent note' }, { token: other.token });
    const claim = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent.token });
    expect(claim.status, claim.body).toBe(200);
    const { discussion } = claim.json<{ discussion: { changes_requested: Comment | null; human_comments: Comment[] } }>();
    expect(discussion.changes_requested).toBeNull();
    expect(discussion.human_comments.map((c) => c.body?.slice(0, 7))).toEqual(['human 5', 'human 4', 'human 3', 'human 2', 'human 1']);
    expect(discussion.human_comments[0]?.body).toHaveLength(500);
    expect(discussion.human_comments[0]?.truncated).toBe(true);
    expect(discussion.human_comments[1]?.truncated).toBeUndefined();
    const resumed = (await t.request('GET', `/api/v1/tasks/${task.id}?view=full`, { token: agent.token })).json<{ discussion: typeof discussion }>();
    expect(resumed.discussion).toEqual(discussion);
    const compact = (await t.request('GET', `/api/v1/tasks/${task.id}`, { token: agent.token })).json();
    expect(compact).not.toHaveProperty('discussion');
  });
});
