import type { Walker } from './walk.ts';

const RESERVATION = 'res_01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The reservation operations: acquire (and its conflict, a bounded wait, refusals), read, list, heartbeat, release; a task that requires one, claimed or refused. */
export async function walkReservations(w: Walker): Promise<void> {
  const { call, who } = w;
  const agent = who.agent.token;
  const body = { repo: 'github.com/acme/walk', paths: ['src/**'], ttl_s: 120 };
  const held = (await call('POST', '/api/v1/reservations', { body, token: agent }, 201)).json<{ id: string; epoch: number }>();
  await call('POST', '/api/v1/reservations', { body: { repo: 'github.com/acme/walk', paths: ['src/a.ts'] } }, 409);
  await call('POST', '/api/v1/reservations', { body: { repo: 'github.com/acme/walk', paths: ['src/a.ts'], wait_s: 1 } }, 409);
  const task = (await call('POST', '/api/v1/tasks', { body: { title: 'Needs src', reservations: [{ repo: 'github.com/acme/walk', paths: ['src/b.ts'], mode: 'shared' }] } }, 201)).json<{ id: string }>();
  await call('POST', '/api/v1/tasks', { body: { title: 'Bad', reservations: [{ repo: 'github.com/acme/walk' }] } }, 400);
  await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {} }, 409);
  await call('POST', '/api/v1/reservations', { body: { resource: 'walk-db', mode: 'shared' } }, 201);
  await call('POST', '/api/v1/reservations', { body: { resource: 'walk-db', repo: 'github.com/acme/walk' } }, 400);
  await call('POST', '/api/v1/reservations', { body: { repo: 'github.com/acme/walk', paths: ['../etc/**'] } }, 400);
  await call('GET', '/api/v1/reservations?limit=1', {}, 200);
  await call('GET', '/api/v1/reservations?holder=me&state=all', { token: agent }, 200);
  await call('GET', `/api/v1/reservations/${held.id}`, {}, 200);
  await call('GET', `/api/v1/reservations/${RESERVATION}`, {}, 404);
  await call('POST', `/api/v1/reservations/${held.id}/heartbeat`, { body: { epoch: held.epoch }, token: agent }, 200);
  await call('POST', `/api/v1/reservations/${held.id}/heartbeat`, { body: {} }, 403);
  await call('POST', `/api/v1/reservations/${held.id}/release`, { body: { epoch: held.epoch + 1 }, token: agent }, 409);
  await call('POST', `/api/v1/reservations/${held.id}/release`, { body: { epoch: held.epoch }, token: agent }, 200);
  await call('POST', `/api/v1/reservations/${held.id}/release`, { body: {}, token: agent }, 409);
}
