import { randomUUID } from 'node:crypto';
import { type TaskRef, UNKNOWN, type Walker } from './walk.ts';

/** tasks_delete (a destructive operation) and the approvals it asks for. */
export async function walkApprovals(w: Walker): Promise<void> {
  const { call, expectHeader, who } = w;
  const agent = who.agent.token;
  const make = async (title: string) => (await call('POST', '/api/v1/tasks', { body: { title } }, 201)).json<TaskRef>();
  const direct = await make('Deleted by a human');
  const approved = await make('Deleted on approval');
  const stale = await make('Changed while its deletion waited');

  await call('DELETE', `/api/v1/tasks/${direct.id}`, { ifMatch: `"${direct.version}"` }, 200);
  await call('GET', `/api/v1/tasks/${direct.id}`, {}, 404);
  await call('DELETE', `/api/v1/tasks/${UNKNOWN.task}`, {}, 404);
  await call('DELETE', `/api/v1/tasks/${approved.id}`, { token: who.reader.token }, 403);
  await call('DELETE', `/api/v1/tasks/${approved.id}`, { key: null }, 400);

  const askKey = randomUUID();
  const request = (await call('DELETE', `/api/v1/tasks/${approved.id}`, { key: askKey, token: agent }, 202)).json<{ id: string }>();
  expectHeader(await call('DELETE', `/api/v1/tasks/${approved.id}`, { key: askKey, token: agent }, 202), 'idempotency-replayed', 'true');
  const staleRequest = (await call('DELETE', `/api/v1/tasks/${stale.id}`, { token: agent }, 202)).json<{ id: string }>();
  await call('DELETE', `/api/v1/tasks/${UNKNOWN.task}`, { token: agent }, 404);

  await call('GET', '/api/v1/approvals', {}, 200);
  await call('GET', '/api/v1/approvals?status=pending&limit=1', {}, 200);
  await call('GET', '/api/v1/approvals', { token: agent }, 200);
  await call('GET', '/api/v1/approvals?status=maybe', {}, 400);
  await call('GET', '/api/v1/approvals', { token: who.eventsOnly.token }, 403);
  await call('GET', `/api/v1/approvals/${request.id}`, { token: agent }, 200);
  await call('GET', `/api/v1/approvals/${request.id}`, { token: who.reviewer.token }, 404);
  await call('GET', `/api/v1/approvals/${UNKNOWN.approval}`, {}, 404);
  await call('GET', '/api/v1/approvals/not-an-approval', {}, 400);

  await call('POST', `/api/v1/approvals/${request.id}/approve`, { body: {}, token: who.agentAdmin.token }, 403);
  await call('POST', `/api/v1/approvals/${request.id}/approve`, { body: {}, token: agent }, 403);
  await call('POST', `/api/v1/approvals/${request.id}/approve`, { body: { reason: 'fine' } }, 200);
  await call('GET', `/api/v1/approvals/${request.id}`, {}, 200);
  await call('POST', `/api/v1/approvals/${request.id}/approve`, { body: {} }, 409);
  await call('POST', `/api/v1/approvals/${UNKNOWN.approval}/approve`, { body: {} }, 404);

  await call('PATCH', `/api/v1/tasks/${stale.id}`, { body: { title: 'Changed since' } }, 200);
  await call('POST', `/api/v1/approvals/${staleRequest.id}/approve`, { body: {} }, 409);
  await call('POST', `/api/v1/approvals/${staleRequest.id}/deny`, { body: {}, token: who.agentAdmin.token }, 403);
  await call('POST', `/api/v1/approvals/${staleRequest.id}/deny`, { body: { reason: 'it changed' } }, 200);
  await call('POST', `/api/v1/approvals/${staleRequest.id}/deny`, { body: {} }, 409);
  await call('POST', `/api/v1/approvals/${staleRequest.id}/deny`, { body: { reason: '' } }, 400);
  await call('GET', `/api/v1/approvals/${staleRequest.id}`, {}, 200);
}
