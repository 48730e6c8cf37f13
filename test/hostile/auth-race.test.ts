import { randomBytes } from 'node:crypto';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { postRaw } from '../inbound/helpers.ts';

const SECRET = `whsec_${randomBytes(24).toString('base64')}`;
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ authWebhookSecret: SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

/** Posts one signed auth-provider delivery; `updatedAt` is the user object's updated_at (epoch ms). */
function send(type: string, data: Record<string, unknown>, at = new Date()) {
  const id = `msg_${randomBytes(8).toString('hex')}`;
  const body = JSON.stringify({ type, object: 'event', data });
  const headers = { 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': new Webhook(SECRET).sign(id, at, body), 'content-type': 'application/json' };
  return postRaw(t, '/webhooks/auth', body, headers);
}

const humans = (externalId: string) => t.database.db.selectFrom('agents').selectAll().where('external_id', '=', externalId).execute();

describe('concurrent auth-provider events about one new user', () => {
  it('10 concurrent user.created/user.updated: all 200, one principal, in the newest event state', async () => {
    const base = Date.now() - 60_000;
    const events = Array.from({ length: 10 }, (_, i) => ({
      type: i === 0 ? 'user.created' : 'user.updated',
      data: { id: 'user_race', first_name: `Name${i}`, last_name: 'Racer', updated_at: base + i * 1000 },
    }));
    // Newest first in the send order, so arrival order and event order disagree.
    const answers = await Promise.all(events.reverse().map((e) => send(e.type, e.data)));
    for (const res of answers) expect(res.status, res.body).toBe(200);
    const rows = await humans('user_race');
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ name: 'Name9 Racer', disabled: false });
    const applied = await t.database.db.selectFrom('events').select('type').where('subject', '=', rows[0]?.id ?? '').execute();
    expect(applied).toHaveLength(10);
  });

  it('an older update arriving after a newer one changes nothing', async () => {
    const now = Date.now();
    expect((await send('user.created', { id: 'user_order', first_name: 'New', updated_at: now })).status).toBe(200);
    expect((await send('user.updated', { id: 'user_order', first_name: 'Old', updated_at: now - 5000 })).status).toBe(200);
    expect((await humans('user_order'))[0]).toMatchObject({ name: 'New' });
  });

  it('a deletion that arrives before the creation leaves the user disabled', async () => {
    const now = new Date();
    expect((await send('user.deleted', { id: 'user_gone', deleted: true }, now)).status).toBe(200);
    expect((await send('user.created', { id: 'user_gone', first_name: 'Late', updated_at: now.getTime() - 10_000 })).status).toBe(200);
    const rows = await humans('user_gone');
    expect(rows).toHaveLength(1);
    expect(rows[0]?.disabled).toBe(true);
  });

  it('concurrent deliveries of the same event id are one success and clean duplicates', async () => {
    const at = new Date();
    const id = `msg_${randomBytes(8).toString('hex')}`;
    const body = JSON.stringify({ type: 'user.created', object: 'event', data: { id: 'user_dup', first_name: 'Dup' } });
    const headers = { 'svix-id': id, 'svix-timestamp': String(Math.floor(at.getTime() / 1000)), 'svix-signature': new Webhook(SECRET).sign(id, at, body), 'content-type': 'application/json' };
    const answers = await Promise.all(Array.from({ length: 10 }, () => postRaw(t, '/webhooks/auth', body, headers)));
    for (const res of answers) expect(res.status, res.body).toBe(200);
    expect(answers.filter((res) => res.json<{ duplicate: boolean }>().duplicate === false)).toHaveLength(1);
    expect(await humans('user_dup')).toHaveLength(1);
  });
});
