import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from '../../src/server.ts';
import { engine, freshDatabase, testConfig } from '../harness.ts';
import { pollUntil } from '../leases/instances.ts';
import { type Receiver, startReceiver } from '../realtime/receiver.ts';
import { type PgBouncer, startPgBouncer } from './pgbouncer.ts';

/**
 * Baton behind PgBouncer in transaction mode (docs/operations.md, "PgBouncer"): Debian's pgbouncer,
 * started here, with prepared statements off and BATON_DATABASE_LISTEN_URL at PostgreSQL itself.
 * LISTEN needs a session, which transaction pooling does not keep: through PgBouncer the
 * notifications are dropped, so only the direct address wakes a webhook pass (or a stream) when
 * another write appends. The delivery worker's interval is a minute here, so a delivery within the
 * test's bound was woken by the append's NOTIFY.
 */
describe.skipIf(engine !== 'postgres')('behind PgBouncer in transaction mode (PostgreSQL only)', () => {
  let bouncer: PgBouncer;
  let receiver: Receiver;
  let server: Server;
  let token: string;

  beforeAll(async () => {
    const { database, url } = await freshDatabase();
    await database.close();
    if (!url) throw new Error('PostgreSQL has a URL');
    bouncer = await startPgBouncer(url, 4);
    receiver = await startReceiver();
    server = await createServer(testConfig({ databaseUrl: bouncer.through(url), listenUrl: url, dbPreparedStatements: false, webhookIntervalMs: 60_000 }));
    token = server.bootstrapToken ?? '';
  });
  afterAll(async () => {
    await server?.close();
    await receiver?.close();
    await bouncer?.stop();
  });

  const send = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
    const res = await server.app.inject({
      method,
      url,
      headers: { authorization: `Bearer ${token}`, ...(method === 'POST' ? { 'idempotency-key': crypto.randomUUID(), 'content-type': 'application/json' } : {}) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: res.statusCode, body: res.body, json: <T>() => JSON.parse(res.body) as T };
  };

  it('serves writes and reads, and an append wakes the webhook worker through the direct LISTEN', async () => {
    const webhook = await send('POST', '/api/v1/webhooks', { url: `${receiver.url}/bounced`, event_types: ['task.created'] });
    expect(webhook.status, webhook.body).toBe(201);
    receiver.trust('/bounced', webhook.json<{ secret: string }>().secret);
    const delivered = async (title: string) => {
      const task = await send('POST', '/api/v1/tasks', { title });
      expect(task.status, task.body).toBe(201);
      const id = task.json<{ id: string }>().id;
      expect((await send('GET', `/api/v1/tasks/${id}`)).status).toBe(200);
      const got = await pollUntil(async () => receiver.deliveries.find((d) => d.path === '/bounced' && d.body.subject === id), 10_000, `the delivery of ${title}`);
      expect(got).toMatchObject({ verified: true, body: { type: 'task.created', subject: id } });
    };
    // The first may go out with the pass the worker runs once its LISTEN is in place (appends
    // before it notified nobody); by the second, only the append's NOTIFY wakes it.
    await delivered('through PgBouncer');
    await delivered('through PgBouncer, once more');
  });
});
