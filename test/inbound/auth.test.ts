import { randomBytes } from 'node:crypto';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';
import { eventsForProviderEvent, inboundCounts, postRaw } from './helpers.ts';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ authWebhookSecret: SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

let seq = 0;
/** A delivery as the auth provider sends it through Svix: a message id, the event type and its data. */
function delivery(type: string, data: Record<string, unknown>) {
  const id = `msg_${++seq}${randomBytes(6).toString('hex')}`;
  return { id, body: JSON.stringify({ type, object: 'event', data }) };
}

function signed(d: { id: string; body: string }, options: { secret?: string; at?: Date } = {}) {
  const at = options.at ?? new Date();
  const signature = new Webhook(options.secret ?? SECRET).sign(d.id, at, d.body);
  return { 'svix-id': d.id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': signature, 'content-type': 'application/json' };
}

const user = (id: string, first: string) => ({
  id,
  first_name: first,
  last_name: 'Lovelace',
  primary_email_address_id: 'idn_2',
  email_addresses: [
    { id: 'idn_1', email_address: 'old@example.com' },
    { id: 'idn_2', email_address: 'ada@example.com' },
  ],
});

const human = (externalId: string) => t.database.db.selectFrom('agents').selectAll().where('external_id', '=', externalId).executeTakeFirst();

describe('POST /webhooks/auth (signed with the svix package)', () => {
  it('user.created makes a human principal once; the replay changes nothing', async () => {
    const d = delivery('user.created', user('user_ada', 'Ada'));
    const first = await postRaw(t, '/webhooks/auth', d.body, signed(d));
    expect(first.status, first.body).toBe(200);
    const receipt = first.json<{ duplicate: boolean; event_id: string }>();
    expect(receipt.duplicate).toBe(false);
    const row = await human('user_ada');
    expect(row).toMatchObject({ kind: 'human', name: 'Ada Lovelace', email: 'ada@example.com', disabled: false, created_by_kind: 'system' });
    expect(row?.scopes).not.toContain('agents:admin');
    const events = await eventsForProviderEvent(t, d.id);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: receipt.event_id, type: 'auth.user_created', subject: row?.id, actor_kind: 'system' });
    // Visible through the API like any principal.
    const read = await t.request('GET', `/api/v1/agents/${row?.id}`);
    expect(read.json()).toMatchObject({ name: 'Ada Lovelace', kind: 'human', created_by: { id: 'system', kind: 'system' } });

    const before = await inboundCounts(t);
    const replay = await postRaw(t, '/webhooks/auth', d.body, signed(d));
    expect(replay.json()).toEqual({ received: true, duplicate: true, event_id: receipt.event_id });
    expect(await inboundCounts(t)).toEqual(before);
    const all = await t.database.db.selectFrom('agents').select('id').where('external_id', '=', 'user_ada').execute();
    expect(all).toHaveLength(1);
  });

  it('user.updated renames; session.* is recorded; user.deleted disables the human and revokes its tokens', async () => {
    const created = delivery('user.created', user('user_grace', 'Grace'));
    expect((await postRaw(t, '/webhooks/auth', created.body, signed(created))).status).toBe(200);
    const id = (await human('user_grace'))?.id ?? '';
    const issued = await t.request('POST', `/api/v1/agents/${id}/tokens`, { body: { machine: 'laptop' } });
    expect(issued.status, issued.body).toBe(201);
    const token = issued.json<{ token: string }>().token;
    expect((await t.request('GET', '/api/v1/whoami', { token })).status).toBe(200);

    const updated = delivery('user.updated', { ...user('user_grace', 'Grace'), last_name: 'Hopper' });
    expect((await postRaw(t, '/webhooks/auth', updated.body, signed(updated))).status).toBe(200);
    expect(await human('user_grace')).toMatchObject({ name: 'Grace Hopper', version: 2 });

    const session = delivery('session.created', { id: 'sess_1', user_id: 'user_grace', status: 'active' });
    expect((await postRaw(t, '/webhooks/auth', session.body, signed(session))).status).toBe(200);
    expect((await eventsForProviderEvent(t, session.id)).map((e) => [e.type, e.subject])).toEqual([['auth.session_recorded', id]]);

    const deleted = delivery('user.deleted', { id: 'user_grace', deleted: true });
    expect((await postRaw(t, '/webhooks/auth', deleted.body, signed(deleted))).status).toBe(200);
    expect(await human('user_grace')).toMatchObject({ disabled: true });
    expectProblem(await t.request('GET', '/api/v1/whoami', { token }), 401, 'invalid_token');
    const [event] = await eventsForProviderEvent(t, deleted.id);
    expect(event).toMatchObject({ type: 'auth.user_deleted', subject: id, actor_kind: 'system' });
    expect((event?.data as { revoked_tokens: string[] }).revoked_tokens).toHaveLength(1);
  });

  it('refuses a tampered body, a stale timestamp and a wrong secret with 400 and records nothing', async () => {
    const before = await inboundCounts(t);
    const d = delivery('user.created', user('user_mallory', 'Mallory'));
    const tampered = d.body.replace('Mallory', 'Trudy');
    expectProblem(await postRaw(t, '/webhooks/auth', tampered, signed(d)), 400, 'invalid_signature');
    expectProblem(await postRaw(t, '/webhooks/auth', d.body, signed(d, { at: new Date(Date.now() - 10 * 60_000) })), 400, 'invalid_signature');
    const otherSecret = `whsec_${randomBytes(24).toString('base64')}`;
    expectProblem(await postRaw(t, '/webhooks/auth', d.body, signed(d, { secret: otherSecret })), 400, 'invalid_signature');
    expect(await inboundCounts(t)).toEqual(before);
    expect(await human('user_mallory')).toBeUndefined();
  });

  it('a signed payload without the fields the type needs is a 400 that records nothing', async () => {
    const before = await inboundCounts(t);
    const d = delivery('user.created', { first_name: 'Nobody' });
    expectProblem(await postRaw(t, '/webhooks/auth', d.body, signed(d)), 400, 'validation_failed');
    expect(await inboundCounts(t)).toEqual(before);
  });
});
