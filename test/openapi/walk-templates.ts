import type { Walker } from './walk.ts';

const TEMPLATE = 'tpl_01ARZ3NDEKTSV4RRFFQ69G5FAV';

/** The template operations: create (and its refusals), read, list, update, a dry run, an instantiation, delete. */
export async function walkTemplates(w: Walker): Promise<void> {
  const { call } = w;
  const body = {
    name: 'walk',
    parameters: [{ name: 'area', type: 'enum', values: ['web', 'api'] }, { name: 'days', type: 'number', default: 2 }],
    tasks: [
      { key: 'plan', title: 'Plan {{area}}', labels: ['{{area}}'] },
      { key: 'build', title: 'Build {{area}}', parent: 'plan', blocked_by: ['review'], due_s: 86400 },
      { key: 'review', title: 'Approve the {{area}} plan', approval: true, not_before_s: 60 },
    ],
  };
  const made = (await call('POST', '/api/v1/templates', { body }, 201)).json<{ id: string; version: number }>();
  await call('POST', '/api/v1/templates', { body: { ...body, tasks: [{ key: 'a', title: 'A', blocked_by: ['a'] }] } }, 422);
  await call('POST', '/api/v1/templates', { body: { ...body, tasks: [{ key: 'a', title: '{{nope}}' }] } }, 400);
  await call('GET', '/api/v1/templates?limit=1', {}, 200);
  await call('GET', `/api/v1/templates/${made.id}`, {}, 200);
  await call('GET', `/api/v1/templates/${TEMPLATE}`, {}, 404);
  await call('PATCH', `/api/v1/templates/${made.id}`, { body: { name: 'walked' }, ifMatch: `"${made.version}"` }, 200);
  await call('PATCH', `/api/v1/templates/${made.id}`, { body: { name: 'again' }, ifMatch: `"${made.version}"` }, 409);
  await call('POST', `/api/v1/templates/${made.id}/instantiate`, { body: { params: { area: 'web' }, dry_run: true } }, 201);
  await call('POST', `/api/v1/templates/${made.id}/instantiate`, { body: { params: { area: 'db' } } }, 400);
  await call('POST', `/api/v1/templates/${made.id}/instantiate`, { body: { params: { area: 'api', days: 3 } } }, 201);
  await call('DELETE', `/api/v1/templates/${made.id}`, {}, 200);
  await call('DELETE', `/api/v1/templates/${made.id}`, {}, 404);
}
