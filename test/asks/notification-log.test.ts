import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { type MailReceiver, startMailReceiver } from './receivers.ts';

/**
 * An SMTP server that refuses shows in the server's log (spec/notifications.md "Delivery"): each
 * failed attempt at warn with the reply and the next try, the last at error. Nothing is lost meanwhile.
 */

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
let at = new Date('2026-11-28T09:00:00.000Z');
const clock: Clock = { now: () => new Date(at) };
const logged: { level: number; msg: string; [key: string]: unknown }[] = [];
let t: TestServer;
let smtp: MailReceiver;

beforeAll(async () => {
  smtp = await startMailReceiver();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) logged.push(JSON.parse(line) as (typeof logged)[number]);
      done();
    },
  });
  const notify = { smtpUrl: smtp.url, smtpFrom: 'Baton <baton@example.test>', chatWebhookUrl: undefined, digestS: 3600, linkTtlS: 3600 };
  t = await startTestServer({ cronSecret: CRON_SECRET, sweepIntervalMs: 0, webhookRetryScheduleMs: [0, 10_000], notify }, { clock, logger: pino({ level: 'warn' }, sink) });
});
afterAll(async () => {
  await t.close();
  await smtp.close();
});

const sweep = async () => expect((await t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } })).status).toBe(200);

describe('a notification the SMTP server refuses', () => {
  it('is logged at warn with the reply and the next attempt, then at error when no attempt is left', async () => {
    const person = await t.addPrincipal({ kind: 'human', scopes: ['tasks:read', 'tasks:write'] });
    await t.database.db.updateTable('agents').set({ email: 'pat@example.test' }).where('id', '=', person.id).execute();
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'Ship it' } })).json<{ id: string }>();
    smtp.failNext = 2;
    expect((await t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question: 'Friday?', to: person.id, timeout_s: 3600, default: { text: 'no' } } })).status).toBe(201);
    await sweep();
    expect(logged.filter((l) => l.msg === 'notification not sent; will retry')).toEqual([
      expect.objectContaining({ level: 40, channel: 'email', principal_id: person.id, status: 451, attempts: 1, next_attempt_at: expect.any(String) as unknown }),
    ]);
    at = new Date(at.getTime() + 12_000);
    await sweep();
    expect(logged.filter((l) => l.msg === 'notification failed: no attempts left')).toEqual([expect.objectContaining({ level: 50, channel: 'email', status: 451, attempts: 2 })]);
  });
});
