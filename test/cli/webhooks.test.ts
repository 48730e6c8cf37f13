import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { type Receiver, startReceiver } from '../realtime/receiver.ts';
import { type ListeningCli, listeningCli } from './listening-cli.ts';

/**
 * `baton webhooks` through the real binary against a listening server and a local receiver that
 * verifies each delivery (standardwebhooks): the secret printed once verifies what arrives, the
 * delivery log shows it, a rotated secret replaces it, and an agent's subscription waits for a
 * human's approval.
 */

let t: TestServer;
let cli: ListeningCli;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestServer({ webhookIntervalMs: 100 });
  cli = await listeningCli(t);
  receiver = await startReceiver();
}, 120_000);
afterAll(async () => {
  await t.close();
  await receiver.close();
  await cli.close();
});

const baton = (token: string, args: string[], expected = 0) => cli.baton(token, args, expected);
const newTask = (title: string) => cli.newTask(title);

it('subscribes with a secret shown once that verifies deliveries, lists them, rotates the secret, disables, replays and deletes', { timeout: 120_000 }, async () => {
  const admin = t.adminToken;
  await baton(admin, ['webhooks', 'create', `${receiver.url}/hook`, '--event', 'task.create'], 2);
  const created = await baton(admin, ['webhooks', 'create', `${receiver.url}/hook`, '--event', 'task.created']);
  const [, id = '', secret = ''] = /^(whk_\w+) {2}\S+\nsecret (\S+)\n$/.exec(created.stdout) ?? [];
  expect(id, created.stdout).toMatch(/^whk_/);
  expect(created.stderr).toContain('not shown again');
  receiver.trust('/hook', secret);

  const first = await newTask('delivered, signed');
  await vi.waitFor(() => expect(receiver.deliveries.find((d) => d.body.subject === first)).toMatchObject({ verified: true, body: { type: 'task.created' } }), { timeout: 30_000, interval: 100 });
  expect((await baton(admin, ['webhooks', 'list'])).stdout).toMatch(new RegExp(`${id}\\s+${receiver.url}/hook\\s+task\\.created\\s+enabled`));
  await vi.waitFor(async () => expect((await baton(admin, ['webhooks', 'deliveries', id])).stdout).toMatch(/evt_\w+\s+delivered\s+1\s+200/), { timeout: 30_000, interval: 200 });

  const rotated = await baton(admin, ['webhooks', 'rotate-secret', id]);
  const fresh = /^secret (\S+)\n$/.exec(rotated.stdout)?.[1] ?? '';
  expect(fresh).not.toBe(secret);
  receiver.trust('/hook', fresh);
  const second = await newTask('signed with the new secret');
  await vi.waitFor(() => expect(receiver.deliveries.find((d) => d.body.subject === second)?.verified).toBe(true), { timeout: 30_000, interval: 100 });

  await baton(admin, ['webhooks', 'update', id, '--disable']);
  expect((await baton(admin, ['webhooks', 'show', id])).stdout).toContain('disabled');
  const missed = await newTask('made while disabled');
  await baton(admin, ['webhooks', 'update', id, '--enable']);
  const since = (await t.request('GET', `/api/v1/events?subject=${second}&limit=1`, { token: admin })).json<{ data: { id: string }[] }>().data[0]?.id ?? '';
  const replayed = await baton(admin, ['webhooks', 'replay', id, '--since', since]);
  expect(replayed.stderr).toMatch(/queued [1-9]\d* deliveries/);
  await vi.waitFor(() => expect(receiver.deliveries.find((d) => d.body.subject === missed)?.verified).toBe(true), { timeout: 30_000, interval: 100 });

  await baton(admin, ['webhooks', 'delete', id]);
  expect((await baton(admin, ['webhooks', 'list', '--json'])).stdout).not.toContain(id);
});

it("answers an agent's subscription with the approval it waits for, which a human then approves", { timeout: 120_000 }, async () => {
  const agent = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'webhooks:manage'] });
  const asked = await baton(agent.token, ['webhooks', 'create', `${receiver.url}/agent`]);
  const approval = /waiting for a human's approval: (apr_\w+)/.exec(asked.stderr)?.[1] ?? '';
  expect(approval, asked.stderr).toMatch(/^apr_/);
  expect(asked.stdout).toBe('');
  await baton(t.adminToken, ['approvals', 'approve', approval]);
  expect((await baton(agent.token, ['webhooks', 'list'])).stdout).toContain(`${receiver.url}/agent`);
});
