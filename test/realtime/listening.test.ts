import { afterAll, beforeAll, expect, it } from 'vitest';
import { createServer, type Server } from '../../src/server.ts';
import type { Database } from '../../src/store/database.ts';
import { freshDatabase, testConfig } from '../harness.ts';
import { pollUntil } from '../leases/instances.ts';
import { subscribe } from './sse-client.ts';

/** Channels the server LISTENs to right now, as counts of its listeners (a real database underneath). */
const listening = new Map<string, number>();
let server: Server;
let baseUrl: string;
let token: string;

beforeAll(async () => {
  const { database } = await freshDatabase();
  const counted: Database = {
    ...database,
    async listen(channel, onNotify) {
      const stop = await database.listen(channel, onNotify);
      listening.set(channel, (listening.get(channel) ?? 0) + 1);
      let stopped = false;
      return async () => {
        if (!stopped) listening.set(channel, (listening.get(channel) ?? 0) - 1);
        stopped = true;
        await stop();
      };
    },
  };
  server = await createServer(testConfig({ webhookIntervalMs: 100 }), { database: counted });
  token = server.bootstrapToken ?? '';
  baseUrl = await server.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => server.close());

async function request(method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': crypto.randomUUID(), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(res.status, await res.clone().text()).toBeLessThan(300);
  return (await res.json()) as { id: string };
}

const listensToEvents = () => (listening.get('baton_events') ?? 0) > 0;
const until = (wanted: boolean, what: string) => pollUntil(async () => (listensToEvents() === wanted ? true : undefined), 5000, what);

// Every write NOTIFYs the events channel, and PostgreSQL wakes every LISTENing connection of the
// database on every commit, whatever it listens to: an instance no stream follows and no live
// webhook needs should LISTEN to nothing.
it('listens to appends only while a live webhook or an open stream needs them, and to nothing otherwise', async () => {
  await request('POST', '/api/v1/tasks', { title: 'nobody listens' });
  expect([...listening.values()].filter((count) => count > 0)).toEqual([]);

  const webhook = await request('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/unused' });
  await until(true, 'listening once a webhook is live');
  await request('DELETE', `/api/v1/webhooks/${webhook.id}`);
  await until(false, 'not listening once no webhook is live');

  const stream = await subscribe(`${baseUrl}/api/v1/events/stream?types=task.created`, token, ['task.created']);
  try {
    await until(true, 'listening while a stream is open');
    const task = await request('POST', '/api/v1/tasks', { title: 'streamed' });
    await stream.waitFor(1, 5000);
    expect(stream.received[0]?.data.subject).toBe(task.id);
  } finally {
    stream.close();
  }
  await until(false, 'not listening once the stream is closed');
});
