import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Principal, type TestServer } from '../harness.ts';
import { expectProblem } from './helpers.ts';
import { eventsSettled } from '../leases/instances.ts';

/**
 * A webhook belongs to its creator (issue 22 item 8): an agent with webhooks:manage used to read,
 * delete and rotate the secret of a human's webhook, and rotation handed it the new secret. To
 * anyone but its owner, agents:admin and a human who decides approvals it is absent on every route (issue 36 item 5).
 */

interface WebhookBody {
  id: string;
  version: number;
  secret?: string | null;
}
interface ApprovalBody {
  id: string;
  status: string;
  result: { status: number; body: WebhookBody } | null;
}

let t: TestServer;
/** Manages webhooks, nothing more. */
let agent: Principal;
/** Manages webhooks and holds agents:admin. */
let adminAgent: Principal;
/** A human who manages webhooks but neither decides approvals nor holds agents:admin. */
let humanMember: Principal;

beforeAll(async () => {
  t = await startTestServer({ webhookIntervalMs: 0 });
  agent = await t.addPrincipal({ kind: 'agent', scopes: ['webhooks:manage', 'tasks:read'] });
  adminAgent = await t.addPrincipal({ kind: 'agent', scopes: ['webhooks:manage', 'tasks:read', 'agents:admin'] });
  humanMember = await t.addPrincipal({ kind: 'human', scopes: ['webhooks:manage', 'tasks:read'] });
});
afterAll(() => t.close());

/** A webhook the bootstrap human creates (it decides approvals, so no gate). */
async function humanWebhook(name: string): Promise<WebhookBody> {
  const res = await t.request('POST', '/api/v1/webhooks', { body: { url: `http://127.0.0.1:9/${name}`, enabled: false } });
  expect(res.status, res.body).toBe(201);
  return res.json<WebhookBody>();
}

/** A webhook `who` asked for and the bootstrap human approved. */
async function agentWebhook(who: Principal, name: string): Promise<WebhookBody> {
  const asked = await t.request('POST', '/api/v1/webhooks', { token: who.token, body: { url: `http://127.0.0.1:9/${name}`, enabled: false } });
  expect(asked.status, asked.body).toBe(202);
  const approved = await approve(asked.json<{ id: string }>().id);
  return approved.result?.body ?? expect.fail('the approval ran');
}

async function approve(id: string): Promise<ApprovalBody> {
  const res = await t.request('POST', `/api/v1/approvals/${id}/approve`, { body: {} });
  expect(res.status, res.body).toBe(200);
  return res.json<ApprovalBody>();
}

/** The newest event's id; settled first, as a list shows only settled events (another database's open transaction on the shared test PostgreSQL holds them back). */
async function lastEvent(): Promise<string> {
  await eventsSettled(t);
  const res = await t.request('GET', '/api/v1/events?order=desc&limit=1');
  return res.json<{ data: { id: string }[] }>().data[0]?.id ?? '';
}

describe("another principal's webhook", () => {
  it('reads as absent to an agent without agents:admin: get and deliveries 404, left out of the list', async () => {
    const webhook = await humanWebhook('read');
    expectProblem(await t.request('GET', `/api/v1/webhooks/${webhook.id}`, { token: agent.token }), 404, 'not_found');
    expectProblem(await t.request('GET', `/api/v1/webhooks/${webhook.id}/deliveries`, { token: agent.token }), 404, 'not_found');
    const list = await t.request('GET', '/api/v1/webhooks', { token: agent.token });
    expect(list.json<{ data: WebhookBody[] }>().data.map((w) => w.id)).not.toContain(webhook.id);
    expect((await t.request('GET', `/api/v1/webhooks/${webhook.id}`, { token: adminAgent.token })).status).toBe(200);
  });

  it('is absent on every route to such an agent or to a human member: 404 as for a made-up id, no approval asked, nothing changed', async () => {
    // Issue 36 item 5: GET answered 404 but PATCH, rotate, DELETE and replay answered 202 with an
    // approval in the owner's inbox, and 404 for a made-up id, so a real id could be told apart.
    const webhook = await humanWebhook('act');
    const madeUp = 'whk_01ARZ3NDEKTSV4RRFFQ69G5FAV';
    const since = await lastEvent();
    const approvalsBefore = (await t.request('GET', '/api/v1/approvals?limit=100')).json<{ data: unknown[] }>().data.length;
    for (const who of [agent, humanMember]) {
      for (const id of [webhook.id, madeUp]) {
        for (const [method, path, body] of [
          ['GET', `/api/v1/webhooks/${id}`, undefined],
          ['GET', `/api/v1/webhooks/${id}/deliveries`, undefined],
          ['PATCH', `/api/v1/webhooks/${id}`, { enabled: true }],
          ['POST', `/api/v1/webhooks/${id}/rotate-secret`, {}],
          ['POST', `/api/v1/webhooks/${id}/replay?since=${since}`, {}],
          ['DELETE', `/api/v1/webhooks/${id}`, undefined],
        ] as const) {
          const problem = expectProblem(await t.request(method, path, { token: who.token, ...(body ? { body } : {}) }), 404, 'not_found');
          expect(problem.detail, `${method} ${path}`).toBe(`No webhook ${id}.`);
        }
      }
    }
    expect((await t.request('GET', '/api/v1/approvals?limit=100')).json<{ data: unknown[] }>().data).toHaveLength(approvalsBefore);
    const now = (await t.request('GET', `/api/v1/webhooks/${webhook.id}`)).json<WebhookBody & { secret_ref: string; enabled: boolean }>();
    expect(now).toMatchObject({ version: webhook.version, secret_ref: 'derived:v1', enabled: false });
  });

  it('is deleted and replayed by an agent with agents:admin at once; its rotation is still gated', async () => {
    const webhook = await humanWebhook('admin');
    const since = await lastEvent();
    expect((await t.request('POST', `/api/v1/webhooks/${webhook.id}/replay?since=${since}`, { token: adminAgent.token, body: {} })).status).toBe(200);
    const rotate = await t.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: adminAgent.token, body: {} });
    expect(rotate.status, rotate.body).toBe(202);
    expect((await t.request('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: adminAgent.token })).status).toBe(200);
  });
});

describe("an agent's own webhook", () => {
  it('is read, replayed and deleted by its owner without an approval', async () => {
    const webhook = await agentWebhook(agent, 'own');
    expect((await t.request('GET', `/api/v1/webhooks/${webhook.id}`, { token: agent.token })).status).toBe(200);
    const list = await t.request('GET', '/api/v1/webhooks', { token: agent.token });
    expect(list.json<{ data: WebhookBody[] }>().data.map((w) => w.id)).toContain(webhook.id);
    const since = await lastEvent();
    expect((await t.request('POST', `/api/v1/webhooks/${webhook.id}/replay?since=${since}`, { token: agent.token, body: {} })).status).toBe(200);
    expect((await t.request('DELETE', `/api/v1/webhooks/${webhook.id}`, { token: agent.token })).status).toBe(200);
  });

  it('has its secret rotated through an approval; the requester alone reads the new secret on it, while it is current', async () => {
    const webhook = await agentWebhook(agent, 'own-rotate');
    const asked = await t.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { token: agent.token, body: {} });
    expect(asked.status, asked.body).toBe(202);
    const approvalId = asked.json<{ id: string }>().id;
    const decided = await approve(approvalId);
    expect(decided.result?.body.secret, 'the approver is not shown it').toBeNull();
    const mine = (await t.request('GET', `/api/v1/approvals/${approvalId}`, { token: agent.token })).json<ApprovalBody>();
    expect(mine.result?.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const human = (await t.request('GET', `/api/v1/approvals/${approvalId}`)).json<ApprovalBody>();
    expect(human.result?.body.secret, 'another reader is not shown it').toBeNull();
    // A later rotation (the human's own, not gated) makes that secret history: the approval stops showing it.
    const again = await t.request('POST', `/api/v1/webhooks/${webhook.id}/rotate-secret`, { body: {} });
    expect(again.json<WebhookBody>().secret).not.toBe(mine.result?.body.secret);
    const later = (await t.request('GET', `/api/v1/approvals/${approvalId}`, { token: agent.token })).json<ApprovalBody>();
    expect(later.result?.body.secret).toBeNull();
  });

  it('shows its creating approval the first secret, to the requester only', async () => {
    const asked = await t.request('POST', '/api/v1/webhooks', { token: agent.token, body: { url: 'http://127.0.0.1:9/first-secret', enabled: false } });
    const approvalId = asked.json<{ id: string }>().id;
    await approve(approvalId);
    const mine = (await t.request('GET', `/api/v1/approvals/${approvalId}`, { token: agent.token })).json<ApprovalBody>();
    expect(mine.result?.body.secret).toMatch(/^whsec_/);
    expect((await t.request('GET', `/api/v1/approvals/${approvalId}`, { token: adminAgent.token })).status).toBe(404);
  });
});

describe("a webhook's URL, a secret (a chat channel's lets its holder post there)", () => {
  it('is only its origin in the event log, to a reader without webhooks:manage: created, changed and deleted', async () => {
    const reader = await t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'events:read'] });
    const made = await t.request('POST', '/api/v1/webhooks', { body: { url: 'http://127.0.0.1:9/hooks/T0/B0/s3cret?token=abc', enabled: false } });
    const hook = made.json<WebhookBody>();
    const changed = await t.request('PATCH', `/api/v1/webhooks/${hook.id}`, { body: { url: 'http://127.0.0.1:9/hooks/T0/B0/n3w-s3cret' }, ifMatch: `"${hook.version}"` });
    expect(changed.status, changed.body).toBe(200);
    expect((await t.request('DELETE', `/api/v1/webhooks/${hook.id}`)).status).toBe(200);
    await eventsSettled(t);
    const events = await t.request('GET', '/api/v1/events?types=webhook.created,webhook.updated,webhook.deleted&limit=100', { token: reader.token });
    expect(events.status, events.body).toBe(200);
    expect(events.body).not.toContain('s3cret');
    const origin = 'http://127.0.0.1:9/...';
    const mine = events.json<{ data: { subject: string; data: unknown }[] }>().data.filter((e) => e.subject === hook.id);
    expect(mine.map((e) => e.data)).toEqual([{ url: origin, event_types: null, enabled: false }, { changes: { url: { from: origin, to: origin } } }, { url: origin }]);
  });
});
