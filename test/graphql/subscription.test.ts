import type { AddressInfo } from 'node:net';
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
let base: string;
beforeAll(async () => {
  t = await startTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});
afterAll(() => t.close());

/** Opens a GraphQL subscription over SSE (the "distinct connections" mode) and reads its frames. */
async function subscribe(query: string, token: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({ query }),
    signal: controller.signal,
  });
  if (!res.body) throw new Error('no body');
  const frames = res.body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    /** The next frame's JSON payload. */
    async next<T>(): Promise<T> {
      const { value, done } = await frames.read();
      if (done) throw new Error('the subscription ended');
      return JSON.parse(value.data) as T;
    },
    close: () => controller.abort(),
  };
}

describe('GraphQL subscription to events (over SSE)', () => {
  it('delivers every matching event in commit order, from `since`, with the selected fields only', async () => {
    const first = await t.request('POST', '/api/v1/tasks', { body: { title: 'before the subscription' } });
    const since = (await t.request('GET', `/api/v1/tasks/${first.json<{ id: string }>().id}/events`)).json<{ data: { id: string }[] }>().data[0]?.id;
    const sub = await subscribe(`subscription { events(since: "${since}", types: "task.created,task.updated") { id type subject actor { kind } } }`, t.adminToken);
    expect(sub.status).toBe(200);
    expect(sub.contentType).toMatch(/^text\/event-stream/);

    const made: string[] = [];
    for (const title of ['one', 'two', 'three']) {
      const task = (await t.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
      made.push(task.id);
      await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { priority: 'high' } });
    }
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
