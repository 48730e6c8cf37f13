import { afterAll, beforeAll, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/domain/event-types.ts';
import { claimTask, type Cluster, createTask, type EventBody, INSTANCES, pages, startInstances } from '../leases/instances.ts';
import type { Principal } from '../harness.ts';
import { type Received, subscribe } from './sse-client.ts';

/**
 * Issue 44 §2: an agent's stream with `for=me` carries the events that concern it (spec/realtime.md,
 * "Events for me"): its assignments, mentions, answers, asks to it, and what others do to its tasks;
 * never another agent's, never its own actions; and it resumes with Last-Event-ID without gap or repeat.
 */

let cluster: Cluster;
let a: Principal;
let b: Principal;

beforeAll(async () => {
  cluster = await startInstances(INSTANCES);
  a = await cluster.addPrincipal();
  b = await cluster.addPrincipal();
});
afterAll(() => cluster.close());

const last = () => cluster.instances.at(-1)?.baseUrl ?? '';
const nameOf = (p: Principal) => `test-${p.id.slice(-6)}`;
const seen = (received: readonly Received[]) => received.map((r) => `${r.event} ${r.data.subject}`);

async function ok(method: string, path: string, token: string | undefined, body: Record<string, unknown>): Promise<{ id: string }> {
  const res = await cluster.request(method, path, { ...(token ? { token } : {}), body });
  expect(res.status, res.body).toBeLessThan(300);
  return res.json<{ id: string }>();
}

it('gives each agent its own assignments, mentions, asks, answers and task events, not the other\'s nor its own, across reconnects', async () => {
  const forA = await subscribe(`${last()}/api/v1/events/stream?for=me`, a.token, EVENT_TYPES);
  // B's client drops its connection every ~1.5 kB and resumes with Last-Event-ID, as EventSource does.
  const forB = await subscribe(`${last()}/api/v1/events/stream?for=me`, b.token, EVENT_TYPES, { cutAfterBytes: 1500 });
  try {
    // A human assigns t1 to A; B claims t2 itself (its own claim stays away from it).
    const t1 = await createTask(cluster, { title: 'for A', assignee: a.id });
    const t2 = await createTask(cluster, { title: 'for B' });
    await claimTask(cluster, t2.id, b.token);
    // Others act on B's task: a human comments and edits it; A's comment on its own task mentions B.
    await ok('POST', `/api/v1/tasks/${t2.id}/comments`, undefined, { body: 'how is it going?' });
    await ok('PATCH', `/api/v1/tasks/${t2.id}`, undefined, { priority: 'high' });
    await ok('POST', `/api/v1/tasks/${t1.id}/comments`, a.token, { body: `@${nameOf(b)} have a look` });
    // B asks A about t2; A answers.
    const ask = await ok('POST', `/api/v1/tasks/${t2.id}/asks`, b.token, { question: 'which branch?', to: a.id, timeout_s: 600, default: { text: 'main' } });
    await ok('POST', `/api/v1/asks/${ask.id}/answer`, a.token, { text: 'main' });
    // B comments on its own task: that does not come back to it.
    await ok('POST', `/api/v1/tasks/${t2.id}/comments`, b.token, { body: 'done soon' });
    // The last events: a task assigned to each.
    const t3 = await createTask(cluster, { title: 'next for A', assignee: a.id });
    const t4 = await createTask(cluster, { title: 'next for B', assignee: b.id });

    await forA.waitFor(3, 30_000);
    await forB.waitFor(5, 30_000);
    expect(seen(forA.received)).toEqual([`task.assigned ${t1.id}`, `ask.created ${t2.id}`, `task.assigned ${t3.id}`]);
    expect(seen(forB.received)).toEqual([
      `comment.created ${t2.id}`,
      `task.updated ${t2.id}`,
      `comment.mentioned ${b.id}`,
      `ask.answered ${t2.id}`,
      `task.assigned ${t4.id}`,
    ]);
    expect(forB.opens).toBeGreaterThanOrEqual(2);
    // Each frame once, in timeline order.
    const order = (await pages<EventBody>(cluster, '/api/v1/events')).map((e) => e.id);
    const ids = forB.received.map((r) => r.id);
    expect(ids.map((id) => order.indexOf(id))).toEqual([...ids.map((id) => order.indexOf(id))].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(ids.length);
  } finally {
    forA.close();
    forB.close();
  }
}, 90_000);
