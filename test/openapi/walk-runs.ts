import { UNKNOWN, type Walker } from './walk.ts';

/** The run operations: usage and log on a live lease (and their refusals), a run read and listed. */
export async function walkRuns(w: Walker): Promise<void> {
  const { call, who } = w;
  const agent = who.agent.token;
  const task = (await call('POST', '/api/v1/tasks', { body: { title: 'Walk a run' } }, 201)).json<{ id: string }>();
  const lease = (await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: agent }, 200)).json<{ lease: { id: string } }>().lease;
  await call('POST', `/api/v1/leases/${lease.id}/usage`, { body: { input_tokens: 100, output_tokens: 20, cost: 0.01, model: 'walk' }, token: agent }, 200);
  await call('POST', `/api/v1/leases/${lease.id}/usage`, { body: { cost: 1, currency: 'EUR' }, token: agent }, 409);
  await call('POST', `/api/v1/leases/${lease.id}/usage`, { body: { input_tokens: -1 }, token: agent }, 400);
  await call('POST', `/api/v1/leases/${lease.id}/usage`, { body: {}, token: who.reviewer.token }, 403);
  await call('POST', `/api/v1/leases/${UNKNOWN.lease}/usage`, { body: {}, token: agent }, 404);
  await call('POST', `/api/v1/leases/${lease.id}/log`, { body: { lines: ['walking'] }, token: agent }, 200);
  await call('POST', `/api/v1/leases/${lease.id}/log`, { body: { lines: [] }, token: agent }, 400);
  await call('GET', `/api/v1/runs/${lease.id}?log_lines=5`, {}, 200);
  await call('GET', `/api/v1/runs/${lease.id}`, { token: who.reviewer.token }, 404);
  await call('GET', `/api/v1/runs?task_id=${task.id}`, {}, 200);
  await call('GET', '/api/v1/runs?agent=me&limit=1', { token: agent }, 200);
  await call('GET', `/api/v1/runs?agent=${who.reviewer.id}`, { token: agent }, 403);
  await call('GET', '/api/v1/runs?day=yesterday', {}, 400);
  await call('GET', '/api/v1/insight?by=day', {}, 200);
  await call('GET', '/api/v1/insight?from=2026-01-01&to=2026-06-01', {}, 400);
  await call('GET', '/api/v1/insight', { token: agent }, 403);
  await call('POST', `/api/v1/leases/${lease.id}/release`, { body: {}, token: agent }, 200);
  await call('POST', `/api/v1/leases/${lease.id}/log`, { body: { lines: ['late'] }, token: agent }, 409);
  // The export's JSON page (the streamed CSV and JSON lines are test/runs/export.test.ts's).
  const day = new Date().toISOString().slice(0, 10);
  const page = (await call('GET', `/api/v1/exports/runs?from=${day}&to=2099-01-01&limit=1`, {}, 200)).json<{ next_cursor: string | null }>();
  if (page.next_cursor) await call('GET', `/api/v1/exports/runs?from=${day}&to=2099-01-01&cursor=${page.next_cursor}`, {}, 200);
  await call('GET', `/api/v1/exports/events?from=${day}&to=2099-01-01`, {}, 200);
  await call('GET', '/api/v1/exports/usage?from=yesterday', {}, 400);
  await call('GET', `/api/v1/exports/usage?from=${day}&to=2099-01-01`, { token: agent }, 403);
}
