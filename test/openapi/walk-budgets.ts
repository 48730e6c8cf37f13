import type { Walker } from './walk.ts';

const BUDGET = 'bdg_01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The budget operations: set (and refusals), read, list, a claim refused and a heartbeat told, raise, delete. */
export async function walkBudgets(w: Walker): Promise<void> {
  const { call, who } = w;
  const agent = who.agent.token;
  const body = { name: 'walk', applies_to: 'label', target: 'walk-budget', unit: 'tokens', period: 'day', limit: 100 };
  const made = (await call('POST', '/api/v1/budgets', { body }, 201)).json<{ id: string; version: number }>();
  await call('POST', '/api/v1/budgets', { body: { ...body, currency: 'EUR' } }, 400);
  await call('POST', '/api/v1/budgets', { body, token: who.agentAdmin.token }, 403);
  await call('GET', '/api/v1/budgets?applies_to=label&limit=1', {}, 200);
  await call('GET', `/api/v1/budgets/${made.id}`, { token: agent }, 200);
  await call('GET', `/api/v1/budgets/${BUDGET}`, {}, 404);
  const held = (await call('POST', '/api/v1/tasks', { body: { title: 'Walk a budget', labels: ['walk-budget'] } }, 201)).json<{ id: string }>();
  const next = (await call('POST', '/api/v1/tasks', { body: { title: 'Walk a budget, refused', labels: ['walk-budget'] } }, 201)).json<{ id: string }>();
  const lease = (await call('POST', `/api/v1/tasks/${held.id}/claim`, { body: {}, token: agent }, 200)).json<{ lease: { id: string } }>().lease;
  await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: { usage: { input_tokens: 100 } }, token: agent }, 200);
  await call('POST', `/api/v1/tasks/${next.id}/claim`, { body: {}, token: agent }, 409);
  await call('POST', '/api/v1/tasks/claim', { body: { labels: ['walk-budget'] }, token: agent }, 409);
  await call('PATCH', `/api/v1/budgets/${made.id}`, { body: { limit: 1000 }, ifMatch: `"${made.version}"` }, 200);
  await call('PATCH', `/api/v1/budgets/${made.id}`, { body: { spent: 0 }, ifMatch: `"${made.version}"` }, 409);
  await call('POST', `/api/v1/leases/${lease.id}/release`, { body: {}, token: agent }, 200);
  await call('DELETE', `/api/v1/budgets/${made.id}`, {}, 200);
  await call('DELETE', `/api/v1/budgets/${made.id}`, {}, 404);
}
