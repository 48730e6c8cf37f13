import { randomUUID } from 'node:crypto';
import { UNKNOWN, type Walker } from './walk.ts';

interface Claim {
  task: { id: string };
  lease: { id: string; epoch: number };
}

/** Comments, assignment, hand-in and review: successes, refusals, validation failures and a replay. */
export async function walkCollaboration(w: Walker): Promise<void> {
  const { call, expectHeader, who } = w;
  const agent = who.agent.token;
  const reviewer = who.reviewer.token;
  const comment = 'cmt_01ARZ3NDEKTSV4RRFFQ69G5FAV';

  const task = (await call('POST', '/api/v1/tasks', { body: { title: 'Talked about', assignee: who.agent.id } }, 201)).json<{ id: string }>();
  await call('POST', '/api/v1/tasks', { body: { title: 'x', assignee: UNKNOWN.agent } }, 422);
  await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: reviewer }, 409);
  await call('GET', `/api/v1/tasks?assignee=me&view=full`, { token: agent }, 200);
  await call('GET', `/api/v1/tasks?assignee=none&limit=2`, {}, 200);
  await call('GET', `/api/v1/tasks?assignee=${who.agent.id}`, {}, 200);
  await call('GET', '/api/v1/tasks?assignee=someone', {}, 400);

  const key = randomUUID();
  const said = (await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'Please start with the docs.' }, key }, 201)).json<{ id: string }>();
  expectHeader(await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'Please start with the docs.' }, key }, 201), 'idempotency-replayed', 'true');
  await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'Hey @no-such-principal' } }, 422);
  await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: '' } }, 400);
  await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'x' }, token: who.reader.token }, 403);
  await call('POST', `/api/v1/tasks/${UNKNOWN.task}/comments`, { body: { body: 'x' } }, 404);
  await call('GET', `/api/v1/tasks/${task.id}/comments`, { token: who.reader.token }, 200);
  await call('GET', `/api/v1/tasks/${task.id}/comments?cursor=not-ours`, {}, 400);
  await call('GET', `/api/v1/tasks/${UNKNOWN.task}/comments`, {}, 404);
  await call('GET', `/api/v1/comments/${said.id}`, { token: agent }, 200);
  await call('GET', `/api/v1/comments/${comment}`, {}, 404);
  await call('PATCH', `/api/v1/comments/${said.id}`, { body: { body: 'Please start with the README.' }, ifMatch: '"1"' }, 200);
  await call('PATCH', `/api/v1/comments/${said.id}`, { body: { body: 'Stale' }, ifMatch: '"1"' }, 409);
  await call('PATCH', `/api/v1/comments/${said.id}`, { body: { body: 'Not mine' }, token: agent }, 403);
  const doomed = (await call('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'Typo' }, token: agent }, 201)).json<{ id: string }>();
  await call('DELETE', `/api/v1/comments/${doomed.id}`, { token: agent }, 200);
  await call('DELETE', `/api/v1/comments/${doomed.id}`, { token: agent }, 409);

  const claim = (await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent }, 200)).json<Claim>();
  await call('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: who.reviewer.id } }, 409);
  await call('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: UNKNOWN.agent } }, 422);
  await call('POST', `/api/v1/tasks/${task.id}/assign`, { body: { assignee: null }, token: who.reader.token }, 403);
  await call('POST', `/api/v1/tasks/${task.id}/review`, { body: { decision: 'approve' }, token: reviewer }, 422);
  await call('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Mine?' }, token: reviewer }, 403);
  await call('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: '' }, token: agent }, 400);
  await call('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Docs written.', lease_epoch: claim.lease.epoch }, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Again' }, token: agent }, 422);
  await call('POST', `/api/v1/tasks/${task.id}/review`, { body: { decision: 'request_changes' }, token: reviewer }, 400);
  await call('POST', `/api/v1/tasks/${task.id}/review`, { body: { decision: 'approve' }, token: agent }, 403);
  await call('POST', `/api/v1/tasks/${task.id}/review`, { body: { decision: 'request_changes', comment: 'Add an example.' }, token: reviewer }, 200);
  await call('GET', `/api/v1/tasks/${task.id}?view=full`, { token: agent }, 200);
  await call('POST', `/api/v1/tasks/${task.id}/hand_in`, { body: { summary: 'Example added.' }, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${task.id}/review`, { body: { decision: 'approve', comment: 'Thanks!' } }, 200);

  const flaky = (await call('POST', '/api/v1/tasks', { body: { title: 'Fails twice', max_attempts: 2 } }, 201)).json<{ id: string }>();
  await call('POST', '/api/v1/tasks', { body: { title: 'x', max_attempts: 0 } }, 400);
  const firstTry = (await call('POST', `/api/v1/tasks/${flaky.id}/claim`, { body: {}, token: agent }, 200)).json<Claim>();
  await call('POST', `/api/v1/leases/${firstTry.lease.id}/release`, { body: { outcome: 'failed' }, token: agent }, 400);
  await call('POST', `/api/v1/leases/${firstTry.lease.id}/release`, { body: { outcome: 'failed', reason: 'Flaky network' }, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${flaky.id}/claim`, { body: {}, token: agent }, 409);
  await call('POST', `/api/v1/tasks/${flaky.id}/requeue`, {}, 409);
  await call('PATCH', `/api/v1/tasks/${flaky.id}`, { body: { status: 'blocked' } }, 200);
  await call('GET', '/api/v1/tasks?blocked_reason=attempts_exhausted', {}, 200);
  await call('GET', '/api/v1/tasks?blocked_reason=tired', {}, 400);
  await call('POST', `/api/v1/tasks/${flaky.id}/requeue`, { token: agent }, 403);
  const once = (await call('POST', '/api/v1/tasks', { body: { title: 'Fails once', max_attempts: 1 } }, 201)).json<{ id: string }>();
  const onlyTry = (await call('POST', `/api/v1/tasks/${once.id}/claim`, { body: {}, token: agent }, 200)).json<Claim>();
  await call('POST', `/api/v1/leases/${onlyTry.lease.id}/release`, { body: { outcome: 'failed', reason: 'Disk full' }, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${once.id}/requeue`, {}, 200);

  const other = (await call('POST', '/api/v1/tasks', { body: { title: 'Reassigned' } }, 201)).json<{ id: string }>();
  await call('POST', `/api/v1/tasks/${other.id}/claim`, { body: {}, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${other.id}/assign`, { body: { assignee: who.reviewer.id, release_lease: true, comment: '@' + who.reviewer.id + ' over to you' } }, 200);
  await call('DELETE', `/api/v1/tasks/${other.id}`, {}, 200);
  await call('POST', `/api/v1/tasks/${other.id}/comments`, { body: { body: 'Gone?' } }, 410);
  await call('GET', `/api/v1/tasks/${other.id}/comments`, {}, 200);
}
