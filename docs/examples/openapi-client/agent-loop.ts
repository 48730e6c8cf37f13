import createClient from 'openapi-fetch';
import type { paths } from './baton-api.ts'; // npx openapi-typescript $BATON_URL/api/v1/openapi.json -o baton-api.ts

// The agent loop on a client generated from the OpenAPI document: no `!`, no casts, no `??` fallbacks.
const { BATON_URL = 'http://127.0.0.1:3000', BATON_TOKEN = '' } = process.env;
const baton = createClient<paths>({ baseUrl: BATON_URL, headers: { authorization: `Bearer ${BATON_TOKEN}` } });
const once = () => ({ 'Idempotency-Key': crypto.randomUUID() });

const manifest = await baton.GET('/api/v1', { params: { query: { view: 'compact' } } });
if (manifest.error) throw new Error(`${manifest.error.code}: ${manifest.error.hint}`);
if (!('next_actions' in manifest.data)) throw new Error('asked for the compact manifest');
console.log(`working as ${manifest.data.you.id}; to start: ${manifest.data.next_actions.map((action) => `${action.method} ${action.href}`).join(', ')}`);

for (;;) {
  const claimed = await baton.POST('/api/v1/tasks/claim', { params: { header: once() }, body: { labels: ['docs'], limit: 1 } });
  if (claimed.error) throw new Error(`${claimed.error.code}: ${claimed.error.hint}`);
  if (claimed.data.claims.length === 0) break; // a long-running agent waits retry_after_s and asks again
  for (const { task, lease } of claimed.data.claims) {
    console.log(`${task.id} [${task.labels.join(', ')}] ${task.title}: ${task.description}`);
    console.log(`  offered: ${task.next_actions.map((action) => action.operation).join(', ')}; lease epoch ${lease.epoch}`);
    await baton.POST('/api/v1/leases/{id}/heartbeat', { params: { path: { id: lease.id }, header: once() }, body: { note: `working on ${task.title}` } });
    const moved = await baton.PATCH('/api/v1/tasks/{id}', {
      params: { path: { id: task.id }, header: { ...once(), 'If-Match': `"${task.version}"` } },
      body: { status: 'in_review', lease_epoch: lease.epoch },
    });
    if (moved.error) throw new Error(`${moved.error.code}: ${moved.error.hint}`);
    console.log(`${moved.data.status}: ${moved.data.id} ${moved.data.title}; next: ${moved.data.next_actions.map((action) => action.operation).join(', ')}`);
  }
}
