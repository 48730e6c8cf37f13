import createClient from 'openapi-fetch';
import type { paths } from './baton-api.ts'; // npx openapi-typescript $BATON_URL/api/v1/openapi.json -o baton-api.ts

// The agent loop on a client generated from the OpenAPI document: no `!`, no casts.
const baton = createClient<paths>({ baseUrl: process.env.BATON_URL ?? 'http://127.0.0.1:3000', headers: { authorization: `Bearer ${process.env.BATON_TOKEN ?? ''}` } });
const once = () => ({ 'Idempotency-Key': crypto.randomUUID() });
const line = (task: { id: string; title: string; status: string }) => `${task.status}: ${task.id} ${task.title}`;
const me = await baton.GET('/api/v1/whoami');
if (me.error) throw new Error(`${me.error.code}: ${me.error.hint}`);
console.log(`working as ${me.data.principal.name}`);
for (;;) {
  const claimed = await baton.POST('/api/v1/tasks/claim', { params: { header: once() }, body: { labels: ['docs'], limit: 1 } });
  if (claimed.error) throw new Error(`${claimed.error.code}: ${claimed.error.hint}`);
  if (claimed.data.claims.length === 0) break; // a long-running agent waits retry_after_s and asks again
  for (const { task, lease } of claimed.data.claims) {
    await baton.POST('/api/v1/leases/{id}/heartbeat', { params: { path: { id: lease.id }, header: once() }, body: { note: `working on ${task.title}` } });
    const moved = await baton.PATCH('/api/v1/tasks/{id}', {
      params: { path: { id: task.id }, header: { ...once(), 'If-Match': `"${task.version}"` } },
      body: { status: 'in_review', lease_epoch: lease.epoch },
    });
    if (moved.error) throw new Error(`${moved.error.code}: ${moved.error.hint}`);
    console.log(line(moved.data));
  }
}
