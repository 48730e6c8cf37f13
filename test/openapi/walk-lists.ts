import { type TaskRef, UNKNOWN, type Walker } from './walk.ts';

interface PageBody {
  data: { id: string }[];
  next_cursor: string | null;
  sync_cursor: string | null;
}

/** tasks_list, tasks_events and events_list: pages at the bound, filters, projections, deltas, bad parameters. */
export async function walkLists(w: Walker, tasks: { first: TaskRef; byAgent: TaskRef }): Promise<void> {
  const { call, present, who } = w;
  const { first, byAgent } = tasks;

  const full = (await call('GET', '/api/v1/tasks?limit=100', {}, 200)).json<PageBody>();
  await call('GET', `/api/v1/tasks?limit=100&cursor=${encodeURIComponent(present(full.next_cursor, 'tasks next_cursor'))}`, {}, 200);
  await call('GET', '/api/v1/tasks', {}, 200);
  await call('GET', '/api/v1/tasks?view=full&limit=3', { token: who.agent.token }, 200);
  await call('GET', '/api/v1/tasks?fields=title,next_actions,lease,blocked_by,waiting_on&limit=5', {}, 200);
  await call('GET', '/api/v1/tasks?status=todo,done&labels=docs', { token: who.reader.token }, 200);
  await call('GET', `/api/v1/tasks?since=${present(full.sync_cursor, 'tasks sync_cursor')}`, {}, 200);
  await call('GET', '/api/v1/tasks?limit=0', {}, 400);
  await call('GET', '/api/v1/tasks?limit=101', {}, 400);
  await call('GET', '/api/v1/tasks?status=finished', {}, 400);
  await call('GET', '/api/v1/tasks?cursor=not-ours', {}, 400);
  await call('GET', `/api/v1/tasks?since=${UNKNOWN.event}`, {}, 400);
  await call('GET', '/api/v1/tasks', { token: who.eventsOnly.token }, 403);
  await call('GET', '/api/v1/tasks', { token: who.allowlisted.token }, 403);
  await call('GET', '/api/v1/tasks', { token: null }, 401);
  await call('GET', `/api/v1/events/stream?since=${UNKNOWN.event}`, {}, 400);
  await call('GET', '/api/v1/events/stream', { token: who.reader.token }, 403);

  const history = (await call('GET', `/api/v1/tasks/${byAgent.id}/events?limit=2`, {}, 200)).json<PageBody>();
  await call('GET', `/api/v1/tasks/${byAgent.id}/events?limit=2&cursor=${encodeURIComponent(present(history.next_cursor, 'task events next_cursor'))}`, {}, 200);
  await call('GET', `/api/v1/tasks/${byAgent.id}/events?view=full&order=desc`, { token: who.eventsOnly.token }, 200);
  await call('GET', `/api/v1/tasks/${byAgent.id}/events?types=task.status_changed&fields=type,data`, {}, 200);
  await call('GET', `/api/v1/tasks/${UNKNOWN.task}/events`, {}, 404);
  await call('GET', `/api/v1/tasks/${byAgent.id}/events?types=NotAType`, {}, 400);
  await call('GET', `/api/v1/tasks/${byAgent.id}/events`, { token: who.reader.token }, 403);

  const timeline = (await call('GET', '/api/v1/events?limit=100', {}, 200)).json<PageBody>();
  await call('GET', `/api/v1/events?limit=100&cursor=${encodeURIComponent(present(timeline.next_cursor, 'events next_cursor'))}`, {}, 200);
  await call('GET', '/api/v1/events?order=desc&view=full&limit=100', { token: who.eventsOnly.token }, 200);
  await call('GET', `/api/v1/events?subject=${first.id}&types=task.created,task.updated`, {}, 200);
  const since = present(timeline.data[0]?.id, 'first event id');
  await call('GET', `/api/v1/events?since=${since}&limit=3&fields=type,actor,token_id,machine,idempotency_key`, {}, 200);
  await call('GET', `/api/v1/events?since=${UNKNOWN.event}`, {}, 400);
  await call('GET', '/api/v1/events?order=sideways', {}, 400);
  await call('GET', '/api/v1/events', { token: who.reader.token }, 403);
  await call('GET', '/api/v1/events', { token: null }, 401);
}
