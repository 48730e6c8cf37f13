import type { Walker } from './walk.ts';

const SCHEDULE = 'sch_01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The schedule operations: create (and its refusals), read, list (two pages), update, delete. */
export async function walkSchedules(w: Walker): Promise<void> {
  const { call } = w;
  const body = { name: 'walk', cron: '0 9 * * 1-5', time_zone: 'Europe/Berlin', task: { title: 'Walk the schedule', labels: ['walk'] }, enabled: false };
  const made = (await call('POST', '/api/v1/schedules', { body }, 201)).json<{ id: string; version: number }>();
  await call('POST', '/api/v1/schedules', { body: { ...body, name: 'walk 2' } }, 201);
  await call('POST', '/api/v1/schedules', { body: { ...body, cron: 'nine on weekdays' } }, 400);
  await call('GET', '/api/v1/schedules?limit=1', {}, 200);
  await call('GET', `/api/v1/schedules/${made.id}`, {}, 200);
  await call('GET', `/api/v1/schedules/${SCHEDULE}`, {}, 404);
  await call('PATCH', `/api/v1/schedules/${made.id}`, { body: { enabled: true }, ifMatch: `"${made.version}"` }, 200);
  await call('PATCH', `/api/v1/schedules/${made.id}`, { body: { enabled: false }, ifMatch: `"${made.version}"` }, 409);
  await call('DELETE', `/api/v1/schedules/${made.id}`, {}, 200);
  await call('DELETE', `/api/v1/schedules/${made.id}`, {}, 404);
}
