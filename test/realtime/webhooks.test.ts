import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { engine, startTestServer } from '../harness.ts';
import { claimTask, type Cluster, type EventBody, eventsSettled, INSTANCES, pages, pollUntil, startInstances, taskEvents } from '../leases/instances.ts';
import { type Receiver, startReceiver } from './receiver.ts';

interface WebhookBody {
  id: string;
  enabled: boolean;
  disabled_reason: string | null;
  secret?: string | null;
}
interface DeliveryBody {
  event_id: string;
  state: 'pending' | 'delivered' | 'failed';
  attempts: { status: number | null; duration_ms: number; error: string | null }[];
}

let cluster: Cluster;
let receiver: Receiver;

beforeAll(async () => {
  receiver = await startReceiver();
  // Every instance runs a delivery worker; a short schedule keeps the retries within the test.
  cluster = await startInstances(INSTANCES, { webhookIntervalMs: 100, webhookRetryScheduleMs: [0, 100, 100] });
});
afterAll(async () => {
  await cluster.close();
  await receiver.close();
});

async function subscribe(path: string, body: Record<string, unknown> = {}): Promise<WebhookBody> {
  const res = await cluster.request('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}${path}`, event_types: ['task.created'], ...body } });
  expect(res.status, res.body).toBe(201);
  const webhook = res.json<WebhookBody>();
  expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  receiver.trust(path, webhook.secret ?? '');
  return webhook;
}

async function createTask(title: string): Promise<string> {
  const res = await cluster.request('POST', '/api/v1/tasks', { body: { title }, via: INSTANCES - 1 });
  expect(res.status, res.body).toBe(201);
  return res.json<{ id: string }>().id;
}

function deliveries(webhook: WebhookBody): Promise<DeliveryBody[]> {
  return pages<DeliveryBody>(cluster, `/api/v1/webhooks/${webhook.id}/deliveries`);
}

describe('outbound webhooks', () => {
  it('delivers each matching event once, signed so that standardwebhooks verifies it', async () => {
    const webhook = await subscribe('/ok');
    const tasks = [await createTask('one'), await createTask('two'), await createTask('three')];
    await pollUntil(async () => (receiver.deliveries.filter((d) => d.path === '/ok').length >= 3 ? true : undefined), 15_000, 'three deliveries');
    const got = receiver.deliveries.filter((d) => d.path === '/ok');
    expect(got.every((d) => d.verified)).toBe(true);
    expect(got.map((d) => d.body.subject).sort()).toEqual([...tasks].sort());
    expect(got.every((d) => d.id === d.body.id && d.body.type === 'task.created')).toBe(true);
    expect(new Set(got.map((d) => d.id)).size).toBe(3);
    const log = await deliveries(webhook);
    expect(log.map((d) => [d.state, d.attempts.length])).toEqual([['delivered', 1], ['delivered', 1], ['delivered', 1]]);
  });

  it('fans out to a webhook for every type and one for a few, side by side: each gets its events once, heartbeats passed over by the other', async () => {
    const every = await subscribe('/every', { event_types: null });
    const claims = await subscribe('/claims', { event_types: ['task.claimed'] });
    const id = await createTask('watched from two sides');
    const lease = (await claimTask(cluster, id, cluster.adminToken)).lease.id;
    // Heartbeats: events the claims webhook does not take, read for the other one only.
    for (const note of ['one', 'two', 'three']) expect((await cluster.request('POST', `/api/v1/leases/${lease}/heartbeat`, { body: { note } })).status).toBe(200);
    const second = await createTask('after the heartbeats');
    await claimTask(cluster, second, cluster.adminToken);
    const timeline = [...(await taskEvents(cluster, id)), ...(await taskEvents(cluster, second))];
    const of = (path: string) => receiver.deliveries.filter((d) => d.path === path && [id, second].includes(String(d.body.subject)));
    await pollUntil(async () => (of('/every').length >= timeline.length && of('/claims').length >= 2 ? true : undefined), 15_000, 'both webhooks’ deliveries');
    expect(of('/every').map((d) => d.id).sort()).toEqual(timeline.map((e) => e.id).sort());
    expect(timeline.filter((e) => e.type === 'lease.renewed')).toHaveLength(3);
    expect(of('/claims').map((d) => d.id).sort()).toEqual(timeline.filter((e) => e.type === 'task.claimed').map((e) => e.id).sort());
    expect([...of('/every'), ...of('/claims')].every((d) => d.verified)).toBe(true);
    const logged = await deliveries(claims);
    expect(logged.map((d) => d.state)).toEqual(['delivered', 'delivered']);
    expect((await deliveries(every)).length).toBeGreaterThanOrEqual(timeline.length);
  });

  it('retries a receiver that fails twice: delivered once, after 3 logged attempts', async () => {
    receiver.script('/flaky', [500, 503]);
    const webhook = await subscribe('/flaky');
    await createTask('flaky');
    const [delivery] = await pollUntil(async () => {
      const log = await deliveries(webhook);
      return log[0]?.state === 'delivered' ? log : undefined;
    }, 15_000, 'the delivery');
    expect(delivery?.attempts.map((a) => a.status)).toEqual([500, 503, 200]);
    expect(delivery?.attempts.map((a) => a.error)).toEqual(['HTTP 500', 'HTTP 503', null]);
    const got = receiver.deliveries.filter((d) => d.path === '/flaky');
    expect(got.filter((d) => d.status === 200)).toHaveLength(1);
    expect(got.every((d) => d.verified && d.id === delivery?.event_id)).toBe(true);
  });

  it('marks a delivery failed after the last try and disables the webhook with an event', async () => {
    receiver.script('/down', [500, 500, 500]);
    const webhook = await subscribe('/down');
    await createTask('nobody home');
    const disabled = await pollUntil(async () => {
      const res = await cluster.request('GET', `/api/v1/webhooks/${webhook.id}`);
      const body = res.json<WebhookBody>();
      return body.enabled ? undefined : body;
    }, 15_000, 'the webhook disabled');
    expect(disabled.disabled_reason).toContain('failed after 3 attempts');
    const [delivery] = await deliveries(webhook);
    expect(delivery?.state).toBe('failed');
    expect(delivery?.attempts).toHaveLength(3);
    const events = await pages<EventBody>(cluster, `/api/v1/events?subject=${webhook.id}`);
    expect(events.map((e) => e.type)).toEqual(['webhook.created', 'webhook.disabled']);
    expect(events[1]?.actor.kind).toBe('system');
  });

  it('turns a webhook off once, with one event, when two of its deliveries fail in the same pass', async () => {
    // One write, two events (task.created and task.assigned): one fan-out queues both, one pass attempts both.
    receiver.script('/gone', [410, 410]);
    const webhook = await subscribe('/gone', { event_types: ['task.created', 'task.assigned'] });
    const agent = await cluster.request('POST', '/api/v1/agents', { body: { name: 'Assignee', scopes: ['tasks:read'] } });
    expect(agent.status, agent.body).toBe(201);
    const res = await cluster.request('POST', '/api/v1/tasks', { body: { title: 'for the assignee', assignee: agent.json<{ id: string }>().id } });
    expect(res.status, res.body).toBe(201);
    const log = await pollUntil(async () => {
      const got = await deliveries(webhook);
      return got.length === 2 && got.every((d) => d.state === 'failed') ? got : undefined;
    }, 15_000, 'both deliveries failed');
    expect(log.map((d) => d.attempts.map((a) => a.status))).toEqual([[410], [410]]);
    const disabled = (await cluster.request('GET', `/api/v1/webhooks/${webhook.id}`)).json<WebhookBody>();
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'receiver answered 410 Gone' });
    const events = await pages<EventBody>(cluster, `/api/v1/events?subject=${webhook.id}`);
    expect(events.map((e) => e.type)).toEqual(['webhook.created', 'webhook.disabled']);
  });

  it('replays what a webhook missed, from an event id, without resending what it got', async () => {
    const before = await createTask('before the webhook');
    const timeline = await pages<EventBody>(cluster, `/api/v1/events?subject=${before}`);
    const since = timeline[0]?.id ?? '';
    const webhook = await subscribe('/replay');
    await createTask('after the webhook');
    await pollUntil(async () => (receiver.deliveries.some((d) => d.path === '/replay') ? true : undefined), 15_000, 'the live delivery');
    // Replay from before the first task: only that task's event is new to this webhook.
    const sinceFirst = await pages<EventBody>(cluster, '/api/v1/events?types=task.created');
    const earlier = sinceFirst[sinceFirst.findIndex((e) => e.id === since) - 1]?.id ?? since;
    const res = await cluster.request('POST', `/api/v1/webhooks/${webhook.id}/replay?since=${earlier}`, { body: {} });
    expect(res.status, res.body).toBe(200);
    expect(res.json()).toMatchObject({ queued: 1, has_more: false });
    await pollUntil(async () => (receiver.deliveries.filter((d) => d.path === '/replay').length >= 2 ? true : undefined), 15_000, 'the replayed delivery');
    const got = receiver.deliveries.filter((d) => d.path === '/replay');
    expect(got.map((d) => d.body.subject)).toContain(before);
    expect(got.every((d) => d.verified)).toBe(true);
  });

  it('waits for a human when an agent creates one; the secret is never stored, even in the approval', async () => {
    const agent = await cluster.addPrincipal({ scopes: ['webhooks:manage'] });
    const asked = await cluster.request('POST', '/api/v1/webhooks', { token: agent.token, body: { url: `${receiver.url}/agent` } });
    expect(asked.status, asked.body).toBe(202);
    const approval = asked.json<{ id: string }>();
    const approved = await cluster.request('POST', `/api/v1/approvals/${approval.id}/approve`, { body: {} });
    expect(approved.status, approved.body).toBe(200);
    expect(approved.body).not.toContain('whsec_');
    const list = await pages<WebhookBody>(cluster, '/api/v1/webhooks');
    expect(list.some((w) => w.enabled && !('secret' in w))).toBe(true);
  });

  it('rotates a secret: the new one is shown once and signs what follows; the old one no longer verifies', async () => {
    const agent = await cluster.addPrincipal({ scopes: ['webhooks:manage', 'tasks:write'] });
    const asked = await cluster.request('POST', '/api/v1/webhooks', { token: agent.token, body: { url: `${receiver.url}/rotated`, event_types: ['task.created'] } });
    const approved = await cluster.request('POST', `/api/v1/approvals/${asked.json<{ id: string }>().id}/approve`, { body: {} });
    const webhook = approved.json<{ result: { body: WebhookBody } }>().result.body;
    expect(webhook.secret ?? null).toBeNull();

    // A human who decides approvals rotates directly (an agent's rotation is gated: test/security/webhook-ownership.test.ts).
    const key = 'rotate-once';
    const rotated = await cluster.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { key, body: {} });
    expect(rotated.status, rotated.body).toBe(200);
    const secret = rotated.json<WebhookBody>().secret ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const replay = await cluster.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { key, body: {} });
    expect(replay.headers['idempotency-replayed']).toBe('true');
    expect(replay.json<WebhookBody>().secret).toBeNull();

    receiver.trust('/rotated', secret);
    const first = await createTask('signed with the new secret');
    await pollUntil(async () => receiver.deliveries.find((d) => d.path === '/rotated' && d.body.subject === first), 10_000, 'the first delivery');

    const again = await cluster.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { body: {} });
    expect(again.json<WebhookBody>().secret).not.toBe(secret);
    const second = await createTask('signed with the next secret');
    const got = await pollUntil(async () => receiver.deliveries.find((d) => d.path === '/rotated' && d.body.subject === second), 10_000, 'the second delivery');
    expect(receiver.deliveries.find((d) => d.path === '/rotated' && d.body.subject === first)?.verified).toBe(true);
    expect(got.verified).toBe(false);
    const events = (await cluster.request('GET', `/api/v1/events?subject=${webhook.id}&types=webhook.secret_rotated`)).json<{ data: unknown[] }>();
    expect(events.data).toHaveLength(2);
  });
});

describe('webhook wake-ups', () => {
  it('delivers a new event at once: the NOTIFY of the append wakes the workers, not their 60 s interval', async () => {
    const slow = await startInstances(INSTANCES, { webhookIntervalMs: 60_000 });
    try {
      const res = await slow.request('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}/woken`, event_types: ['task.created'] } });
      expect(res.status, res.body).toBe(201);
      receiver.trust('/woken', res.json<WebhookBody>().secret ?? '');
      const task = await slow.request('POST', '/api/v1/tasks', { body: { title: 'wake up' }, via: INSTANCES - 1 });
      expect(task.status, task.body).toBe(201);
      const got = await pollUntil(async () => receiver.deliveries.find((d) => d.path === '/woken'), 10_000, 'the delivery');
      expect(got).toMatchObject({ verified: true, body: { subject: task.json<{ id: string }>().id } });
    } finally {
      await slow.close();
    }
  });
});

describe('a backlog larger than one pass', () => {
  it('drains at once: a pass that claimed a full batch is followed by another, not by the 60 s interval', async () => {
    const slow = await startInstances(INSTANCES, { webhookIntervalMs: 60_000 });
    try {
      const first = await slow.request('POST', '/api/v1/tasks', { body: { title: 'before the backlog' } });
      expect(first.status, first.body).toBe(201);
      await eventsSettled(slow);
      const since = (await slow.request('GET', '/api/v1/events?order=desc&limit=1')).json<{ data: { id: string }[] }>().data[0]?.id ?? '';
      // 130 tasks, then a webhook that replays them: 130 deliveries due at once, over two and a half passes of 50.
      for (let i = 0; i < 130; i += 10) {
        const made = await Promise.all(Array.from({ length: 10 }, (_, k) => slow.request('POST', '/api/v1/tasks', { body: { title: `backlog ${i + k}` } })));
        for (const res of made) expect(res.status, res.body).toBe(201);
      }
      const res = await slow.request('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}/backlog`, event_types: ['task.created'] } });
      expect(res.status, res.body).toBe(201);
      const webhook = res.json<WebhookBody>();
      receiver.trust('/backlog', webhook.secret ?? '');
      await eventsSettled(slow);
      const replay = await slow.request('POST', `/api/v1/webhooks/${webhook.id}/replay?since=${since}`, { body: {} });
      expect(replay.status, replay.body).toBe(200);
      const got = await pollUntil(async () => {
        const here = receiver.deliveries.filter((d) => d.path === '/backlog');
        return here.length >= 130 ? here : undefined;
      }, 30_000, 'all 130 deliveries');
      expect(new Set(got.map((d) => d.id)).size).toBe(130);
      expect(got.every((d) => d.verified)).toBe(true);
    } finally {
      await slow.close();
    }
  });
});

describe.skipIf(engine !== 'postgres')('webhook wake-ups behind a long transaction (PostgreSQL only: PGlite has one connection)', () => {
  it('delivers an event held back by an older open transaction soon after it ends, not at the next 60 s interval', async () => {
    const slow = await startInstances(INSTANCES, { webhookIntervalMs: 60_000 });
    // Any database on the same server will do: transaction ids are server-wide.
    const other = new pg.Client({ connectionString: process.env.BATON_TEST_DATABASE_URL });
    await other.connect();
    try {
      const res = await slow.request('POST', '/api/v1/webhooks', { body: { url: `${receiver.url}/held`, event_types: ['task.created'] } });
      expect(res.status, res.body).toBe(201);
      receiver.trust('/held', res.json<WebhookBody>().secret ?? '');
      await other.query('BEGIN');
      await other.query('SELECT pg_current_xact_id()');
      const task = await slow.request('POST', '/api/v1/tasks', { body: { title: 'behind an open transaction' } });
      expect(task.status, task.body).toBe(201);
      // The append's wake-up finds the event held back from cursors, so nothing can be delivered yet.
      expect((await slow.request('GET', '/metrics')).body).toMatch(/^baton_events_held_back [1-9]/m);
      // Held for a second, well past the append's wake-up (50 ms) and its delivery pass.
      await new Promise((resolve) => setTimeout(resolve, 1000));
      expect(receiver.deliveries.filter((d) => d.path === '/held')).toEqual([]);
      // Ending it wakes nobody; the workers look again on their own.
      await other.query('COMMIT');
      const got = await pollUntil(async () => receiver.deliveries.find((d) => d.path === '/held'), 10_000, 'the delivery');
      expect(got).toMatchObject({ verified: true, body: { subject: task.json<{ id: string }>().id } });
    } finally {
      await other.query('ROLLBACK').catch(() => undefined);
      await other.end();
      await slow.close();
    }
  });
});

describe('webhook destinations', () => {
  it('refuses URLs resolving to loopback, private, link-local or metadata addresses with a clear problem', async () => {
    const t = await startTestServer({ webhookAllowPrivate: false, webhookIntervalMs: 0 });
    try {
      for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'http://10.1.2.3/hook', 'http://169.254.169.254/latest', 'http://[::1]/hook', 'http://192.168.0.10/hook']) {
        const res = await t.request('POST', '/api/v1/webhooks', { body: { url } });
        expect(res.status, url).toBe(422);
        expect(res.headers['content-type']).toContain('application/problem+json');
        const problem = res.json<{ code: string; detail: string; errors: { pointer: string }[] }>();
        expect(problem.code).toBe('webhook_url_refused');
        expect(problem.detail).toMatch(/resolves to .* a (loopback|private|linkLocal) address/);
        expect(problem.errors[0]?.pointer).toBe('/url');
      }
      const scheme = await t.request('POST', '/api/v1/webhooks', { body: { url: 'ftp://example.com/x' } });
      expect(scheme.json()).toMatchObject({ code: 'webhook_url_refused' });
    } finally {
      await t.close();
    }
  });
});
