import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { type TaskRef, UNKNOWN, type Walker } from './walk.ts';

interface Claim {
  task: TaskRef;
  lease: { id: string; epoch: number };
}

/** tasks_claim, tasks_claim_next, the lease operations, and the updates only a holder makes. */
export async function walkLeases(w: Walker, task: TaskRef): Promise<void> {
  const { call, expectHeader, present, who } = w;
  const agent = who.agent.token;
  const other = who.reviewer.token;

  const lease = (await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 600 }, token: agent }, 200)).json<Claim>().lease;
  await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: other }, 409);
  await call('POST', `/api/v1/tasks/${UNKNOWN.task}/claim`, { body: {}, token: agent }, 404);
  await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: { ttl_s: 5 }, token: other }, 400);
  await call('POST', `/api/v1/tasks/${task.id}/claim`, { body: {}, token: who.reader.token }, 403);
  await call('POST', '/api/v1/tasks/claim', { body: { labels: ['bulk'], limit: 2 }, token: other }, 200);
  await call('POST', '/api/v1/tasks/claim', { body: { labels: ['no-such-label'] }, token: other }, 200);
  await call('POST', '/api/v1/tasks/claim', { body: { limit: 101 }, token: other }, 400);
  await call('POST', '/api/v1/tasks/claim', { body: {}, token: who.reader.token }, 403);
  await call('GET', `/api/v1/tasks/${task.id}?view=full`, { token: agent }, 200);

  await call('GET', '/api/v1/leases?holder=me&state=active', { token: agent }, 200);
  await call('GET', '/api/v1/leases?limit=1', {}, 200);
  await call('GET', `/api/v1/leases?task_id=${task.id}&state=ended`, {}, 200);
  await call('GET', `/api/v1/leases?holder=${who.reviewer.id}`, { token: agent }, 403);
  await call('GET', '/api/v1/leases?limit=0', {}, 400);
  await call('GET', '/api/v1/leases', { token: who.eventsOnly.token }, 403);
  await call('GET', `/api/v1/leases/${lease.id}`, { token: agent }, 200);
  await call('GET', `/api/v1/leases/${lease.id}`, { token: other }, 404);
  await call('GET', '/api/v1/leases/not-a-lease', {}, 400);
  const beatKey = randomUUID();
  await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: { note: 'halfway' }, key: beatKey, token: agent }, 200);
  expectHeader(await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: { note: 'halfway' }, key: beatKey, token: agent }, 200), 'idempotency-replayed', 'true');
  await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: {}, token: other }, 403);
  await call('POST', `/api/v1/leases/${UNKNOWN.lease}/heartbeat`, { body: {}, token: agent }, 404);
  await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: { ttl_s: 5 }, token: agent }, 400);

  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'done' }, token: agent }, 422);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'todo' }, token: agent }, 422);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Not mine' }, token: other }, 403);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'Stale epoch', lease_epoch: lease.epoch + 1 }, token: agent }, 409);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'in_review', lease_epoch: lease.epoch }, token: agent }, 200);
  await call('POST', `/api/v1/leases/${lease.id}/heartbeat`, { body: {}, token: agent }, 409);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'done' }, token: agent }, 403);
  await call('PATCH', `/api/v1/tasks/${task.id}`, { body: { status: 'done' }, token: who.reviewer.token }, 200);
  await call('GET', `/api/v1/tasks/${task.id}?view=full`, {}, 200);

  const next = (await call('POST', '/api/v1/tasks/claim', { body: { labels: ['bulk'] }, token: agent }, 200)).json<{ claims: Claim[] }>();
  const releasable = present(next.claims[0], 'a claimed bulk task').lease;
  await call('POST', `/api/v1/leases/${releasable.id}/release`, { body: {}, token: other }, 403);
  await call('POST', `/api/v1/leases/${releasable.id}/release`, { body: { note: 'out of time' }, token: agent }, 200);
  await call('POST', `/api/v1/leases/${releasable.id}/release`, { body: {}, token: agent }, 409);
  await call('POST', `/api/v1/leases/${UNKNOWN.lease}/release`, { body: {}, token: agent }, 404);
  await call('POST', `/api/v1/leases/${releasable.id}/release`, { body: { id: releasable.id } }, 400);

  const batch = (await call('POST', '/api/v1/tasks/claim', { body: { labels: ['bulk'], limit: 2 }, token: agent }, 200)).json<{ claims: Claim[] }>().claims.map((c) => c.lease.id);
  expect(batch).toHaveLength(2);
  await call('POST', '/api/v1/leases/release', { body: { ids: batch }, token: other }, 403);
  await call('POST', '/api/v1/leases/release', { body: { ids: [...batch, UNKNOWN.lease] }, token: agent }, 404);
  await call('POST', '/api/v1/leases/release', { body: { ids: [batch[0], batch[0]] }, token: agent }, 400);
  await call('POST', '/api/v1/leases/release', { body: { ids: [] }, token: agent }, 400);
  await call('POST', '/api/v1/leases/release', { body: { ids: batch, note: 'shutting down' }, token: agent }, 200);
  await call('POST', '/api/v1/leases/release', { body: { ids: batch }, token: agent }, 409);

  // The one-call work cycle: hand in (or fail) and claim the next, singly and in a batch.
  const pair = (await call('POST', '/api/v1/tasks/claim', { body: { labels: ['bulk'], limit: 2 }, token: agent }, 200)).json<{ claims: Claim[] }>().claims.map((c) => c.lease.id);
  const [handed, failed] = [present(pair[0], 'a claimed bulk lease'), present(pair[1], 'a second claimed bulk lease')];
  await call('POST', `/api/v1/leases/${handed}/cycle`, { body: {}, token: agent }, 400);
  await call('POST', `/api/v1/leases/${handed}/cycle`, { body: { summary: 'Not mine.' }, token: other }, 403);
  await call('POST', `/api/v1/leases/${UNKNOWN.lease}/cycle`, { body: { summary: 'Done.' }, token: agent }, 404);
  const cycled = (await call('POST', `/api/v1/leases/${handed}/cycle`, { body: { summary: 'Done.', labels: ['bulk'] }, token: agent }, 200)).json<{ claims: Claim[] }>();
  await call('POST', `/api/v1/leases/${handed}/cycle`, { body: { summary: 'Done.' }, token: agent }, 409);
  const rest = [failed, ...cycled.claims.map((c) => c.lease.id)];
  await call('POST', '/api/v1/leases/cycle', { body: { leases: [] }, token: agent }, 400);
  await call('POST', '/api/v1/leases/cycle', { body: { leases: rest.map((id) => ({ id, summary: 'Not mine.' })) }, token: other }, 403);
  await call('POST', '/api/v1/leases/cycle', { body: { leases: rest.map((id) => ({ id, outcome: 'failed', reason: 'flaky' })), labels: ['bulk'], limit: 0 }, token: agent }, 200);
  await call('POST', '/api/v1/leases/cycle', { body: { leases: [{ id: failed, outcome: 'failed', reason: 'again' }] }, token: agent }, 409);
}
