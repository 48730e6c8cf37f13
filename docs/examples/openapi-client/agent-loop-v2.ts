import createClient from 'openapi-fetch';
import type { paths } from './baton-api-v2.ts'; // npx openapi-typescript $BATON_URL/api/v2/openapi.json -o baton-api-v2.ts

// The agent loop on /api/v2 (leaner tasks), following each claimed task's next_actions: no `!`, no casts, no `??` fallbacks.
const { BATON_URL = 'http://127.0.0.1:3000', BATON_TOKEN = '' } = process.env;
const baton = createClient<paths>({ baseUrl: BATON_URL, headers: { authorization: `Bearer ${BATON_TOKEN}` } });
const once = () => ({ 'Idempotency-Key': crypto.randomUUID() });

const manifest = await baton.GET('/api/v2', { params: { query: { view: 'compact' } } });
if (manifest.error) throw new Error(`${manifest.error.code}: ${manifest.error.hint}`);
if (!('next_actions' in manifest.data)) throw new Error('asked for the compact manifest');
console.log(`working as ${manifest.data.you.id}; to start: ${manifest.data.next_actions.map((action) => action.operation).join(', ')}`);

for (;;) {
  const claimed = await baton.POST('/api/v2/tasks/claim', { params: { header: once() }, body: { labels: ['docs-v2'], limit: 1 } });
  if (claimed.error) throw new Error(`${claimed.error.code}: ${claimed.error.hint}`);
  if (claimed.data.claims.length === 0) break; // a long-running agent waits retry_after_s and asks again
  for (const { task, lease } of claimed.data.claims) {
    console.log(`${task.id} [${task.labels.join(', ')}] ${task.title}: ${task.description}`);
    for (const action of task.next_actions) {
      // The key the server made for this action: resending it is a safe retry.
      const header = action.key === undefined ? once() : { 'Idempotency-Key': action.key };
      if (action.operation === 'leases_heartbeat') {
        const beat = await baton.POST('/api/v2/leases/{id}/heartbeat', { params: { path: { id: lease.id }, header }, body: { note: `working on ${task.title}` } });
        if (beat.error) throw new Error(`${beat.error.code}: ${beat.error.hint}`);
      }
      if (action.operation === 'tasks_hand_in') {
        const handedIn = await baton.POST('/api/v2/tasks/{id}/hand_in', { params: { path: { id: task.id }, header }, body: { lease_epoch: lease.epoch, summary: `Done: ${task.title}.` } });
        if (handedIn.error) throw new Error(`${handedIn.error.code}: ${handedIn.error.hint}`);
        console.log(`${handedIn.data.status}: ${handedIn.data.id} ${handedIn.data.title}; next: ${handedIn.data.next_actions.map((next) => next.operation).join(', ')}`);
      }
    }
  }
}
