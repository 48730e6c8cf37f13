import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { startMailReceiver, type MailReceiver } from '../asks/receivers.ts';
import { startBaton } from '../cli/run-baton.ts';
import { connectV2, outputOf } from '../mcp/clients.ts';
import { type BrowserHarness, signIn, startBrowser, WAIT } from './browser.ts';

const CRON_SECRET = 'cron-secret-for-tests-0123456789';
/** Reviews escalate to the owners after this long; the server's clock runs `ahead` ms ahead of the real one. */
const REVIEW_SLA_S = 3600;
let ahead = 0;
const clock = { now: () => new Date(Date.now() + ahead) };

describe('a link from a notification email in the web app', () => {
  let h: BrowserHarness;
  let smtp: MailReceiver;
  let page: Page;

  beforeAll(async () => {
    smtp = await startMailReceiver();
    const notify = { smtpUrl: smtp.url, smtpFrom: 'Baton <baton@example.test>', chatWebhookUrl: undefined, digestS: 3600, linkTtlS: 3600 };
    const escalation = { askS: 0, approvalS: 0, reviewS: REVIEW_SLA_S, to: ['role:owner'] };
    h = await startBrowser({ config: { notify, escalation, cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, clock });
    page = await h.context.newPage();
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
    await smtp?.close();
  });

  it('opens the task and answers the ask with the option it names, once', async () => {
    const me = (await h.t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>().principal.id;
    await h.t.database.db.updateTable('agents').set({ email: 'admin@example.test' }).where('id', '=', me).execute();
    const agent = await h.t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const task = (await h.t.request('POST', '/api/v1/tasks', { body: { title: 'Pick the region' } })).json<{ id: string }>();
    const body = { question: 'Which region first?', options: [{ label: 'eu' }, { label: 'us' }], to: me, timeout_s: 3600, default: { option: 'eu' } };
    expect((await h.t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body, token: agent.token })).status).toBe(201);
    const sweep = await h.t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect(sweep.status, sweep.body).toBe(200);
    const us = /Answer "us": http:\/\/baton\.test(\S+)/.exec(smtp.mails[0]?.text ?? '')?.[1];
    expect(us).toMatch(new RegExp(`^/tasks/${task.id}\\?link=`));

    await page.goto(`${h.base}${us}`);
    await page.getByRole('status').filter({ hasText: 'You answered “us”.' }).waitFor(WAIT);
    expect(new URL(page.url()).search).toBe('');
    const ask = (await h.t.request('GET', `/api/v1/asks?task_id=${task.id}`)).json<{ data: { status: string; answer: { option?: string } | null }[] }>().data[0];
    expect(ask).toMatchObject({ status: 'answered', answer: { option: 'us' } });

    await page.goto(`${h.base}${us}`);
    await page.getByRole('alert').filter({ hasText: 'Link already used' }).waitFor(WAIT);
  });

  it('resolves issue 40: an agent asks over MCP with options and a deadline, the person is emailed and answers in the inbox, and the agent\'s `baton wait` returns the answer', { timeout: 120_000 }, async () => {
    const me = (await h.t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>().principal.id;
    await h.t.database.db.updateTable('agents').set({ email: 'admin@example.test' }).where('id', '=', me).execute();
    const agent = await h.t.addPrincipal({ kind: 'agent', name: 'region-bot', scopes: ['tasks:read', 'tasks:write', 'events:read'] });
    const mcp = await connectV2(h.base, agent.token, 'modern');
    const task = outputOf<{ id: string }>(await mcp.callTool({ name: 'tasks_create', arguments: { title: 'Launch the store' } }));
    const start = outputOf<{ cursor: string }>(await mcp.callTool({ name: 'wait', arguments: { timeout_s: 0, work: 'no' } }));
    const ask = outputOf<{ id: string; due_at: string }>(
      await mcp.callTool({ name: 'asks_create', arguments: { id: task.id, question: 'Launch in which region?', options: [{ label: 'eu-west' }, { label: 'us-east' }], to: me, timeout_s: 3600, default: { option: 'eu-west' } } }),
    );
    await mcp.close();
    // The agent blocks on the CLI's wait, a child process, from the cursor it had before asking.
    const waiting = startBaton(['wait', '--cursor', start.cursor, '--timeout', '60', '--no-work', '--json'], { BATON_URL: h.base, BATON_TOKEN: agent.token });
    onTestFinished(() => void waiting.child.kill());

    const sweep = await h.t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect(sweep.status, sweep.body).toBe(200);
    const mail = smtp.mails.find((m) => m.subject.includes('Launch in which region?'));
    expect(mail?.to).toContain('admin@example.test');
    expect(mail?.text).toContain(`Answer by ${new Date(ask.due_at).toUTCString()}.`);
    expect(mail?.text).toMatch(/Answer "us-east": http:\/\/baton\.test\/tasks\//);

    await page.goto(`${h.base}/inbox`);
    const entry = page.locator('li.inbox-item', { hasText: 'Launch in which region?' });
    await entry.getByRole('button', { name: 'us-east' }).click();
    await page.getByTestId('inbox-status').getByText('Answered “Launch in which region?”: us-east.').waitFor(WAIT);

    const woke = await waiting.outcome;
    expect(woke.code, woke.stderr).toBe(0);
    const items = (JSON.parse(woke.stdout) as { items: { type: string; data: { ask_id: string; answer: { option?: string }; defaulted: boolean } }[] }).items;
    expect(items).toEqual([expect.objectContaining({ type: 'ask.answered', data: expect.objectContaining({ ask_id: ask.id, answer: expect.objectContaining({ option: 'us-east' }) as unknown, defaulted: false }) as unknown })]);
  });

  it('lets the person turn email off from the link every email carries; what comes after is not emailed', { timeout: 60_000 }, async () => {
    const me = (await h.t.request('GET', '/api/v1/whoami')).json<{ principal: { id: string } }>().principal.id;
    await h.t.database.db.updateTable('agents').set({ email: 'admin@example.test' }).where('id', '=', me).execute();
    const agent = await h.t.addPrincipal({ kind: 'agent', scopes: ['tasks:read', 'tasks:write'] });
    const task = (await h.t.request('POST', '/api/v1/tasks', { body: { title: 'Name the release' } })).json<{ id: string }>();
    const ask = (question: string) => h.t.request('POST', `/api/v1/tasks/${task.id}/asks`, { body: { question, to: me, timeout_s: 3600, default: { text: 'later' } }, token: agent.token });
    const sweep = () => h.t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect((await ask('Which codename?')).status).toBe(201);
    expect((await sweep()).status).toBe(200);
    const prefs = /Choose what Baton emails you \(at once, a digest, or nothing\): http:\/\/baton\.test(\S+)/.exec(smtp.mails.find((m) => m.subject.includes('Which codename?'))?.text ?? '')?.[1];
    expect(prefs).toBe('/sessions#notifications');

    await page.goto(`${h.base}${prefs}`);
    const section = page.getByRole('region', { name: 'Notifications' });
    await section.getByRole('radio', { name: 'No email' }).check();
    await expect.poll(async () => (await h.t.request('GET', '/api/v1/preferences/notifications')).json<{ email: string }>().email, WAIT).toBe('off');
    expect(await section.getByRole('radio', { name: 'No email' }).isChecked()).toBe(true);

    const before = smtp.mails.length;
    expect((await ask('Which logo?')).status).toBe(201);
    expect((await sweep()).status).toBe(200);
    expect(smtp.mails.slice(before).filter((m) => m.subject.includes('Which logo?'))).toEqual([]);
    await h.t.request('PATCH', '/api/v1/preferences/notifications', { body: { email: 'immediate' } });
  });

  it('marks a review past its SLA overdue on the board and emails the owner, whose inbox says so', { timeout: 60_000 }, async () => {
    const agent = await h.t.addPrincipal({ kind: 'agent', name: 'notes-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const as = async <T>(method: string, url: string, body: unknown) => (await h.t.request(method, url, { token: agent.token, body })).json<T>();
    const task = await as<{ id: string }>('POST', '/api/v1/tasks', { title: 'Write the launch notes' });
    const held = await as<{ lease: { epoch: number } }>('POST', `/api/v1/tasks/${task.id}/claim`, {});
    await as('PATCH', `/api/v1/tasks/${task.id}`, { status: 'in_review', lease_epoch: held.lease.epoch });
    ahead += (REVIEW_SLA_S + 1) * 1000;
    const sweep = await h.t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect(sweep.status, sweep.body).toBe(200);
    expect(smtp.mails.find((m) => m.subject.includes('notes-bot is still waiting: Review Write the launch notes'))?.to).toContain('admin@example.test');

    await page.goto(h.base);
    await page.locator('.task-card', { hasText: 'Write the launch notes' }).getByTestId('sla-overdue').getByText('Review overdue').waitFor(WAIT);
    await page.goto(`${h.base}/inbox`);
    await page.locator('li.inbox-item[data-kind="overdue"]', { hasText: 'Review Write the launch notes' }).waitFor(WAIT);
    await page.locator('li.inbox-item[data-kind="to_review"]', { hasText: 'Write the launch notes' }).getByText('Overdue').waitFor(WAIT);
  });
});
