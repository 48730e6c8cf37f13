import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { eventsSettled } from '../leases/instances.ts';

/**
 * tokens_rotate (POST /api/v1/tokens/{id}/rotate): the same machine gets a new token without
 * downtime. The new one works at once; the old one until the grace ends (or at once without one).
 */

let at = Date.parse('2026-11-28T09:00:00Z');
const clock: Clock = { now: () => new Date(at) };
let t: TestServer;
let agentId: string;

beforeAll(async () => {
  t = await startTestServer({}, { clock });
  const agent = await t.request('POST', '/api/v1/agents', { body: { name: 'rotating-agent', scopes: ['tasks:read', 'tasks:write'] } });
  expect(agent.status, agent.body).toBe(201);
  agentId = agent.json<{ id: string }>().id;
});
afterAll(() => t.close());

interface Issued {
  id: string;
  token: string | null;
  machine: string;
  scopes: string[];
  expires_at: string | null;
  revoked_at: string | null;
  replaced: { id: string; revoked_at: string | null };
}

async function issue(machine: string, body: Record<string, unknown> = {}): Promise<Issued> {
  const res = await t.request('POST', `/api/v1/agents/${agentId}/tokens`, { body: { machine, scopes: ['tasks:read'], ...body } });
  expect(res.status, res.body).toBe(201);
  return res.json<Issued>();
}

const whoami = async (token: string | null) => (await t.request('GET', '/api/v1/whoami', { token })).status;

it('with a grace period, both tokens work until it ends; then only the new one, for the same machine and scopes', async () => {
  const old = await issue('ci-runner-1', { expires_in_s: 86_400 });
  const res = await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: { grace_s: 600 } });
  expect(res.status, res.body).toBe(201);
  const rotated = res.json<Issued>();
  expect(rotated).toMatchObject({ machine: 'ci-runner-1', scopes: ['tasks:read'], revoked_at: null, replaced: { id: old.id, revoked_at: '2026-11-28T09:10:00.000Z' } });
  // The same lifetime as the old one, from now.
  expect(rotated.expires_at).toBe('2026-11-29T09:00:00.000Z');
  expect(await whoami(rotated.token)).toBe(200);
  expect(await whoami(old.token)).toBe(200);
  at += 599_000;
  expect(await whoami(old.token)).toBe(200);
  at += 1_000;
  expect(await whoami(old.token)).toBe(401);
  expect(await whoami(rotated.token)).toBe(200);

  // The timeline says which replaced which (once another test's open transaction on a shared PostgreSQL lets cursors pass it).
  await eventsSettled(t);
  const events = await t.request('GET', `/api/v1/events?types=token.created,token.revoked&limit=10`);
  const byType = new Map(events.json<{ data: { type: string; subject: string; data: Record<string, unknown> }[] }>().data.filter((e) => e.subject === rotated.id || e.subject === old.id).map((e) => [e.type + ' ' + e.subject, e.data]));
  expect(byType.get(`token.created ${rotated.id}`)).toMatchObject({ replaces: old.id, machine: 'ci-runner-1' });
  expect(byType.get(`token.revoked ${old.id}`)).toMatchObject({ replaced_by: rotated.id, effective_at: '2026-11-28T09:10:00.000Z' });
});

it('without a grace period the old token stops at once; a rotated or revoked token cannot be rotated again; a revoke ends a grace early', async () => {
  const old = await issue('ci-runner-2');
  const res = await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: {} });
  expect(res.status, res.body).toBe(201);
  const rotated = res.json<Issued>();
  expect(await whoami(old.token)).toBe(401);
  expect(await whoami(rotated.token)).toBe(200);
  const again = await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: {} });
  expect(again.status).toBe(409);
  expect(again.json()).toMatchObject({ code: 'conflict_state' });

  const graced = (await t.request('POST', `/api/v1/tokens/${rotated.id}/rotate`, { body: { grace_s: 3600 } })).json<Issued>();
  expect(await whoami(rotated.token)).toBe(200);
  expect((await t.request('POST', `/api/v1/tokens/${rotated.id}/rotate`, { body: {} })).status).toBe(409);
  expect((await t.request('DELETE', `/api/v1/tokens/${rotated.id}`)).status).toBe(200);
  expect(await whoami(rotated.token)).toBe(401);
  expect(await whoami(graced.token)).toBe(200);
  // One live token per machine still holds: a new one for the label is refused.
  expect((await t.request('POST', `/api/v1/agents/${agentId}/tokens`, { body: { machine: 'ci-runner-2' } })).status).toBe(409);
});

it('refuses what a caller may not see or cannot be: an unknown token is 404, a grace past a week is 400', async () => {
  const old = await issue('ci-runner-3');
  expect((await t.request('POST', '/api/v1/tokens/tok_01JAAAAAAAAAAAAAAAAAAAAAAA/rotate', { body: {} })).status).toBe(404);
  expect((await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: { grace_s: 8 * 86_400 } })).status).toBe(400);
  // A replay answers the same token ids, without the secret.
  const key = 'rotate-replay-key';
  const first = await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: {}, key });
  const replay = await t.request('POST', `/api/v1/tokens/${old.id}/rotate`, { body: {}, key });
  expect(replay.json<Issued>().id).toBe(first.json<Issued>().id);
  expect(first.json<Issued>().token).toMatch(/^bat_/);
  expect(replay.json<Issued>().token).toBeNull();
});
