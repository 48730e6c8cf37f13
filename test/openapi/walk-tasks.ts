import { randomUUID } from 'node:crypto';
import { generateToken } from '../../src/tokens.ts';
import { type TaskRef, UNKNOWN, type Walker } from './walk.ts';

/** More rows than a page may hold, so the 100-item bound is actually exercised. */
const MANY = 101;
const BAD_CHECKSUM_TOKEN = `bat_${'A'.repeat(36)}`;

/** whoami, tasks_create, tasks_get and tasks_update outside a lease. */
export async function walkTasks(w: Walker): Promise<{ first: TaskRef; byAgent: TaskRef }> {
  const { call, expectHeader, who } = w;

  await call('GET', '/api/v1/whoami', {}, 200);
  await call('GET', '/api/v1/whoami', { token: who.allowlisted.token }, 200);
  await call('GET', '/api/v1/whoami', { token: null }, 401);
  await call('GET', '/api/v1/whoami', { token: BAD_CHECKSUM_TOKEN }, 401);
  await call('GET', '/api/v1/whoami', { token: generateToken() }, 401);
  await call('GET', '/api/v1/whoami', { headers: { authorization: 'Basic abc' }, token: null }, 401);

  const createKey = randomUUID();
  const firstBody = { title: 'First task', labels: ['docs'], priority: 'high' };
  const first = (await call('POST', '/api/v1/tasks', { body: firstBody, key: createKey }, 201)).json<TaskRef>();
  expectHeader(await call('POST', '/api/v1/tasks', { body: firstBody, key: createKey }, 201), 'idempotency-replayed', 'true');
  await call('POST', '/api/v1/tasks', { body: { title: 'Another title' }, key: createKey }, 422);
  await call('POST', '/api/v1/tasks', { body: { title: 'No key' }, key: null }, 400);
  await call('POST', '/api/v1/tasks', { body: { title: 'Long key' }, key: 'k'.repeat(256) }, 400);
  await call('POST', '/api/v1/tasks', { body: { title: '' } }, 400);
  await call('POST', '/api/v1/tasks', { body: { title: 'x', colour: 'red' } }, 400);
  await call('POST', '/api/v1/tasks', { body: { title: 'x', labels: ['Bad Label', 'a', 'a'] } }, 400);
  await call('POST', '/api/v1/tasks', { body: { title: 'x', blocked_by: [UNKNOWN.task] } }, 400);
  await call('POST', '/api/v1/tasks', { body: ['not', 'an', 'object'] }, 400);
  await call('POST', '/api/v1/tasks', { payload: '{"title": ' }, 400);
  await call('POST', '/api/v1/tasks', { payload: '<title>x</title>', headers: { 'content-type': 'application/xml' } }, 415);
  await call('POST', '/api/v1/tasks', { payload: 'title=x', headers: { 'content-type': 'text/plain' } }, 415);
  await call('POST', '/api/v1/tasks', { body: { title: 'x' }, token: who.reader.token }, 403);
  await call('POST', '/api/v1/tasks', { body: { title: 'x' }, token: who.allowlisted.token }, 403);
  await call('POST', '/api/v1/tasks', { body: { title: 'x' }, token: null }, 401);
  const byAgent = (await call('POST', '/api/v1/tasks', { body: { title: 'Agent task', description: 'd' }, token: who.agent.token }, 201)).json<TaskRef>();
  await call('POST', '/api/v1/tasks', { body: { title: 'Waits on the first', blocked_by: [first.id] } }, 201);
  for (let i = 0; i < MANY; i += 10) {
    const batch = Array.from({ length: Math.min(10, MANY - i) }, (_, j) => call('POST', '/api/v1/tasks', { body: { title: `Bulk ${i + j}`, labels: ['bulk'] } }, 201));
    await Promise.all(batch);
  }

  const read = await call('GET', `/api/v1/tasks/${first.id}`, {}, 200);
  await call('GET', `/api/v1/tasks/${first.id}?view=full`, {}, 200);
  await call('GET', `/api/v1/tasks/${first.id}?fields=title,created_by,next_actions`, { token: who.agent.token }, 200);
  await call('GET', `/api/v1/tasks/${first.id}`, { headers: { 'if-none-match': String(read.headers.etag) } }, 304);
  await call('GET', `/api/v1/tasks/${first.id}`, { headers: { 'if-none-match': '"999"' } }, 200);
  await call('GET', `/api/v1/tasks/${first.id}`, { token: who.allowlisted.token }, 200);
  await call('GET', `/api/v1/tasks/${UNKNOWN.task}`, {}, 404);
  await call('GET', '/api/v1/tasks/not-a-task-id', {}, 400);
  await call('GET', `/api/v1/tasks/${first.id}?fields=title,nope`, {}, 400);
  await call('GET', `/api/v1/tasks/${first.id}?unknown=1`, {}, 400);
  await call('GET', `/api/v1/tasks/${first.id}`, { token: who.eventsOnly.token }, 403);
  await call('GET', `/api/v1/tasks/${first.id}`, { token: null }, 401);

  const edited = (await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'First task, renamed' }, ifMatch: '"1"' }, 200)).json<TaskRef>();
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'Stale write' }, ifMatch: '"1"' }, 409);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'Weak tag' }, ifMatch: `W/"${edited.version}"` }, 409);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'Bad tag' }, ifMatch: 'two' }, 400);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'First task, renamed' } }, 200);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: {} }, 400);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { id: first.id, title: 'x' } }, 400);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { status: 'finished' } }, 400);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { blocked_by: [first.id] } }, 400);
  await call('PATCH', `/api/v1/tasks/${UNKNOWN.task}`, { body: { title: 'x' } }, 404);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'x' }, token: who.reader.token }, 403);
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { title: 'x' }, token: null }, 401);
  const doneKey = randomUUID();
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { status: 'done' }, key: doneKey }, 422);
  expectHeader(await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { status: 'done' }, key: doneKey }, 422), 'idempotency-replayed', 'true');
  await call('PATCH', `/api/v1/tasks/${first.id}`, { body: { status: 'in_progress' } }, 422);

  const blockKey = randomUUID();
  const agent = who.agent.token;
  await call('PATCH', `/api/v1/tasks/${byAgent.id}`, { body: { status: 'blocked' }, key: blockKey, token: agent }, 200);
  expectHeader(await call('PATCH', `/api/v1/tasks/${byAgent.id}`, { body: { status: 'blocked' }, key: blockKey, token: agent }, 200), 'idempotency-replayed', 'true');
  await call('PATCH', `/api/v1/tasks/${byAgent.id}`, { body: { status: 'cancelled' }, token: agent }, 200);
  await call('PATCH', `/api/v1/tasks/${byAgent.id}`, { body: { status: 'todo' }, token: agent }, 403);
  await call('PATCH', `/api/v1/tasks/${byAgent.id}`, { body: { status: 'todo' } }, 200);
  return { first, byAgent };
}
