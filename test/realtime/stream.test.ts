import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createIds } from '../../src/ids.ts';
import { appendEvents, type NewEventRow } from '../../src/store/events.ts';
import { type Cluster, type EventBody, INSTANCES, pages, startInstances } from '../leases/instances.ts';
import { subscribe } from './sse-client.ts';

let cluster: Cluster;
const ids = createIds();

beforeAll(async () => {
  cluster = await startInstances(INSTANCES);
});
afterAll(() => cluster.close());

const last = () => cluster.instances.at(-1)?.baseUrl ?? '';

/** Writes `count` events about `subject` straight into the timeline, `batch` per transaction (fast, and as real as any write). */
async function appendSynthetic(subject: string, count: number, batch: number): Promise<string[]> {
  const written: string[] = [];
  for (let start = 0; start < count; start += batch) {
    const rows: NewEventRow[] = Array.from({ length: Math.min(batch, count - start) }, (_, i) => ({
      id: ids.make('evt'),
      type: 'task.updated',
      subject,
      actor_id: 'system',
      actor_kind: 'system',
      token_id: null,
      machine: null,
      idempotency_key: null,
      data: { n: start + i },
      created_at: new Date(),
    }));
    await cluster.database.db.transaction().execute((tx) => appendEvents(tx, rows));
    written.push(...rows.map((r) => r.id));
  }
  return written;
}

describe('GET /api/v1/events/stream', () => {
  it(`delivers to a client on instance ${INSTANCES}, in order, every event written through instance 1`, async () => {
    const client = await subscribe(`${last()}/api/v1/events/stream?types=task.created`, cluster.adminToken, ['task.created']);
    try {
      for (let i = 0; i < 20; i++) {
        const res = await cluster.request('POST', '/api/v1/tasks', { body: { title: `streamed ${i}` }, via: 0 });
        expect(res.status, res.body).toBe(201);
      }
      await client.waitFor(20, 20_000);
      const timeline = await pages<EventBody>(cluster, '/api/v1/events?types=task.created');
      expect(client.received.map((r) => r.id)).toEqual(timeline.map((e) => e.id));
      expect(client.received.every((r) => r.event === 'task.created' && r.data.id === r.id)).toBe(true);
    } finally {
      client.close();
    }
  });

  it('loses none and repeats none of 1,000 events across reconnects with Last-Event-ID', async () => {
    const subject = ids.make('tsk');
    const client = await subscribe(`${last()}/api/v1/events/stream?subject=${subject}`, cluster.adminToken, ['task.updated'], { cutAfterBytes: 90_000 });
    try {
      const written = await appendSynthetic(subject, 1000, 50);
      await client.waitFor(1000, 45_000);
      expect(client.received.map((r) => r.id)).toEqual(written);
      expect(client.opens).toBeGreaterThanOrEqual(3);
    } finally {
      client.close();
    }
  }, 60_000);

  it('resumes strictly after ?since=, and keeps only the asked types and subject', async () => {
    const subject = ids.make('tsk');
    const [first, ...rest] = await appendSynthetic(subject, 5, 5);
    const client = await subscribe(`${last()}/api/v1/events/stream?since=${first}&subject=${subject}`, cluster.adminToken, ['task.updated']);
    try {
      await client.waitFor(4, 10_000);
      expect(client.received.map((r) => r.id)).toEqual(rest);
    } finally {
      client.close();
    }
  });

  it('ends an open stream once its token is revoked; the reconnect is refused', async () => {
    const reader = await cluster.addPrincipal({ scopes: ['events:read'] });
    const client = await subscribe(`${last()}/api/v1/events/stream`, reader.token, ['task.created']);
    try {
      const tokens = await pages<{ id: string }>(cluster, `/api/v1/agents/${reader.id}/tokens`);
      const revoked = await cluster.request('DELETE', `/api/v1/tokens/${tokens[0]?.id ?? ''}`);
      expect(revoked.status, revoked.body).toBe(200);
      expect(await client.waitClosed(20_000)).toBe(401);
    } finally {
      client.close();
    }
  });

  it('refuses before streaming: an unknown since is 400, a token without events:read is 403', async () => {
    const unknown = await cluster.request('GET', '/api/v1/events/stream?since=evt_01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(unknown.status).toBe(400);
    expect(unknown.headers['content-type']).toContain('application/problem+json');
    expect(unknown.json()).toMatchObject({ code: 'invalid_parameter' });
    const reader = await cluster.addPrincipal({ scopes: ['tasks:read'] });
    const refused = await cluster.request('GET', '/api/v1/events/stream', { token: reader.token });
    expect(refused.status).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'forbidden_scope', required_scope: 'events:read' });
  });
});
