import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTestServer, testConfig, type TestServer } from '../harness.ts';
import { type Receiver, startReceiver } from './receiver.ts';

/**
 * BATON_WEBHOOK_ALLOW_PRIVATE as a list (spec/realtime.md, "Destinations"): the listed networks and
 * host names may be reached although private; every other non-public address is still refused.
 */

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let t: TestServer;
let receiver: Receiver;
let byName: Receiver;

beforeAll(async () => {
  // Linux answers all of 127.0.0.0/8 on loopback: one receiver in the listed network, one reached by a listed name.
  receiver = await startReceiver('127.0.0.2');
  byName = await startReceiver('127.0.0.1');
  // Parsed as the operator writes it: one network (127.0.0.2 only) and one host name.
  const { webhookAllowPrivate } = loadConfig({ BATON_WEBHOOK_ALLOW_PRIVATE: '127.0.0.2/32,localhost' });
  // The chat channel is under the same rule: it posts to the receiver in the listed network.
  const notify = { ...testConfig().notify, chatWebhookUrl: `${receiver.url}/chat` };
  t = await startTestServer({ webhookAllowPrivate, webhookIntervalMs: 0, sweepIntervalMs: 0, cronSecret: CRON_SECRET, notify });
});
afterAll(async () => {
  await t?.close();
  await receiver?.close();
  await byName?.close();
});

async function deliver(url: string, path: string, receiving: Receiver, title: string) {
  const made = await t.request('POST', '/api/v1/webhooks', { body: { url, event_types: ['task.created'] } });
  expect(made.status, made.body).toBe(201);
  const hook = made.json<{ id: string; secret: string }>();
  receiving.trust(path, hook.secret);
  const task = (await t.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
  // Passes until the event is fanned out: on the shared test PostgreSQL another test database's open
  // transaction can hold the event back from one pass (transaction ids are server-wide).
  const received = () => receiving.deliveries.filter((d) => d.path === path);
  await expect
    .poll(async () => {
      const pass = await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
      expect(pass.status, pass.body).toBe(200);
      return received().length;
    }, { timeout: 60_000, interval: 200 })
    .toBeGreaterThan(0);
  expect(received()).toMatchObject([{ verified: true, body: { type: 'task.created', subject: task.id } }]);
  const log = (await t.request('GET', `/api/v1/webhooks/${hook.id}/deliveries`)).json<{ data: { state: string }[] }>();
  expect(log.data.map((d) => d.state)).toEqual(['delivered']);
  // Off again, so the next test's event is not delivered here too.
  expect((await t.request('PATCH', `/api/v1/webhooks/${hook.id}`, { body: { enabled: false } })).status).toBe(200);
}

describe('a private-destination allowlist', () => {
  it('delivers to an address in an allowed network', async () => {
    await deliver(`${receiver.url}/allowed`, '/allowed', receiver, 'Reach the internal receiver');
  });

  it('delivers to a listed host name at a private address outside the networks', async () => {
    await deliver(`${byName.url.replace('127.0.0.1', 'LOCALHOST')}/named`, '/named', byName, 'Reach it by name');
  });

  it('still refuses every private address outside the list, naming the variable', async () => {
    for (const [url, address] of [[`${byName.url}/by-address`, '127.0.0.1'], ['http://10.1.2.3/hook', '10.1.2.3'], ['http://169.254.169.254/latest', '169.254.169.254'], ['http://[::1]/hook', '::1'], ['http://[::ffff:10.0.0.1]/hook', '::ffff:a00:1']]) {
      const res = await t.request('POST', '/api/v1/webhooks', { body: { url } });
      expect(res.status, url).toBe(422);
      const problem = res.json<{ code: string; detail: string }>();
      expect(problem.code, url).toBe('webhook_url_refused');
      expect(problem.detail, url).toContain(`resolves to ${address}, `);
      expect(problem.detail, url).toContain('outside BATON_WEBHOOK_ALLOW_PRIVATE');
    }
  });

  it('posts a chat message to a channel in an allowed network, and refuses one outside it', async () => {
    const person = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    const asker = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const askIn = async (title: string) => {
      const task = (await t.request('POST', '/api/v1/tasks', { body: { title } })).json<{ id: string }>();
      const asked = await t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question: 'Go?', to: person.id, timeout_s: 3600, default: { text: 'no' } }, token: asker.token });
      expect(asked.status, asked.body).toBe(201);
      expect((await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } })).status).toBe(200);
    };
    await askIn('Chat inside the network');
    expect(JSON.stringify(receiver.deliveries.filter((d) => d.path === '/chat').map((d) => d.body))).toContain('Chat inside the network');
    // The workspace's own channel, at a private address outside the list, is refused at the attempt.
    expect((await t.request('PATCH', '/api/v1/workspaces/current', { body: { chat_webhook_url: 'http://10.9.8.7/hooks/chat' } })).status).toBe(200);
    await askIn('Chat outside the network');
    const outbox = (await t.request('GET', `/api/v1/notifications?principal_id=${person.id}&channel=chat`)).json<{ data: { state: string; attempts: { error: string | null }[] }[] }>().data;
    expect(outbox.map((n) => n.attempts.at(-1)?.error)).toContainEqual(expect.stringContaining('resolves to 10.9.8.7, a private address outside BATON_WEBHOOK_ALLOW_PRIVATE'));
  });
});
