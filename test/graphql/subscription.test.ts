import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';
import { subscribeGraphql } from './client.ts';

let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await startTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

const subscribe = (query: string, token: string) => subscribeGraphql(base, query, token);

describe('GraphQL subscription to events (over SSE)', () => {
  it('delivers every matching event in commit order, from `since`, with the selected fields only', async () => {
    const first = await t.request('POST', '/api/v1/tasks', { body: { title: 'before the subscription' } });
    const since = (await t.request('GET', `/api/v1/tasks/${first.json<{ id: string }>().id}/events`)).json<{ data: { id: string }[] }>().data[0]?.id;
    const sub = await subscribe(`subscription { events(since: "${since}", types: "task.created,task.updated") { id type subject actor { kind } } }`, t.adminToken);
    expect(sub.status).toBe(200);
    expect(sub.contentType).toMatch(/^text\/event-stream/);
    // As on GET /api/v1/events/stream: nginx passes each frame on at once (spec/realtime.md).
    expect(sub.headers.get('x-accel-buffering')).toBe('no');

    const made: string[] = [];
    for (const title of ['one', 'two', 'three']) {
      const task = (await t.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
      made.push(task.id);
      await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { priority: 'high' } });
    }
    // The list shows settled events only: on a shared PostgreSQL another test's open transaction can hold the newest back for a while.
    await eventsSettled(t);
    const timeline = (await t.request('GET', `/api/v1/events?since=${since}&types=task.created,task.updated&limit=100`)).json<{ data: { id: string; type: string; subject: string }[] }>().data;
    expect(timeline).toHaveLength(6);
    const received: { data: { events: Record<string, unknown> } }[] = [];
    for (let i = 0; i < timeline.length; i++) received.push(await sub.next<{ data: { events: Record<string, unknown> } }>());
    sub.close();
    expect(received.map((r) => r.data.events)).toEqual(timeline.map((e) => ({ id: e.id, type: e.type, subject: e.subject, actor: { kind: 'human' } })));
    expect(received.map((r) => r.data.events['subject'])).toEqual(made.flatMap((id) => [id, id]));
  });

  it('refuses a token without events:read with the same problem REST gives, before any event', async () => {
    const reader = await t.addPrincipal({ scopes: ['tasks:read'] });
    const rest = await t.request('GET', '/api/v1/events/stream', { token: reader.token });
    const sub = await subscribe('subscription { events { id } }', reader.token);
    const result = await sub.next<{ errors: { extensions: Record<string, unknown> }[]; data?: unknown }>();
    sub.close();
    expect(result.data ?? null).toBeNull();
    // The same problem; its hint names GraphQL's way where REST's names the route.
    const hint = rest.json<{ hint: string }>().hint.replace('GET /api/v1/whoami', 'the `whoami` query');
    expect(result.errors[0]?.extensions).toMatchObject({ code: 'forbidden_scope', status: 403, hint, retryable: false });
    expect(rest.status).toBe(403);
  });

  it('answers an unknown `since` with the not-found problem', async () => {
    const sub = await subscribe('subscription { events(since: "evt_01M83YZ94N3F81ZXK5Z5GP8E90") { id } }', t.adminToken);
    const result = await sub.next<{ errors: { extensions: Record<string, unknown> }[] }>();
    sub.close();
    const rest = await t.request('GET', '/api/v1/events/stream?since=evt_01M83YZ94N3F81ZXK5Z5GP8E90');
    expect(result.errors[0]?.extensions['code']).toBe(rest.json<{ code: string }>().code);
  });
});
