import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { axeEverywhere } from './axe.ts';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';

interface Json {
  id: string;
  version: number;
  status: string;
  lease: { id: string; epoch: number } | null;
}
interface Ask {
  id: string;
  status: string;
  answer: { text: string; option?: string } | null;
}
interface Inbox {
  data: { id: string; kind: string; state: string; ref_id: string }[];
  counts: { unread: number; read: number; done: number };
}

/** The humans-in-the-loop inbox in Chromium: asks answered, approvals and reviews decided, mentions, marks, filters, keys, live. */
describe('the inbox in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;
  let me = '';
  const api = apiOf(() => h);
  const asAgent = <T = Json>(method: string, url: string, body?: unknown) => api<T>(method, url, body, agent.token);
  const entry = (text: string) => page.locator('li.inbox-item', { hasText: text });

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'ship-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    me = (await api<{ principal: { id: string } }>('GET', '/api/v1/whoami')).principal.id;
    page = await adminPage(h, { axe: true });
    await page.locator('.live-stream').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('answers asks with their options and free text, decides an approval and a review in place, and shows the unread count in the header', { timeout: 120_000 }, async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Release 2.4' });
    const choice = await asAgent<Ask>('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'Ship 2.4 tonight?', options: [{ label: 'Ship' }, { label: 'Hold' }], to: me, timeout_s: 3600, default: { option: 'Hold' } });
    const free = await asAgent<Ask>('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'Which region first?', to: me, timeout_s: 3600, default: { text: 'eu-west' } });
    await asAgent('POST', `/api/v1/tasks/${task.id}/comments`, { body: `@${me} the changelog is ready for a look` });
    const doomed = await asAgent('POST', '/api/v1/tasks', { title: 'Drop the 2.2 branch' });
    await h.t.request('DELETE', `/api/v1/tasks/${doomed.id}`, { token: agent.token });
    const review = await asAgent('POST', '/api/v1/tasks', { title: 'Write the 2.4 release notes' });
    await asAgent('POST', `/api/v1/tasks/${review.id}/claim`, {});
    await asAgent('POST', `/api/v1/tasks/${review.id}/hand_in`, { summary: 'Drafted; the rate limits are in their own section.' });

    // Two asks, the mention, the approval of the deletion (an item for each human who may decide it) and the work to review (shown once, as the task).
    await page.getByTestId('inbox-badge').getByText('5').waitFor(WAIT);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Inbox/ }).click();
    await page.getByRole('heading', { name: 'Inbox' }).waitFor(WAIT);
    await entry('Write the 2.4 release notes').waitFor(WAIT);
    await entry('Approve tasks_delete?').waitFor(WAIT);
    // A mention by id reads as the name.
    await entry('the changelog is ready').getByText('@admin the changelog is ready for a look').waitFor(WAIT);
    // The work to review says who handed it in and what they said, to decide it from here.
    expect(await entry('Write the 2.4 release notes').getByTestId('handoff').textContent()).toMatch(/^Handed in by\s*Agent\s*ship-bot: Drafted; the rate limits are in their own section\.\s*$/);
    await entry('Ship 2.4 tonight?').getByRole('button', { name: 'Ship' }).waitFor(WAIT);
    expect(await axeEverywhere(page, 'inbox')).toEqual([]);
    await mkdir(SHOTS, { recursive: true });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await page.screenshot({ path: `${SHOTS}inbox-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // An answered ask is done: it leaves the unread view, and the page says what was answered.
    await entry('Ship 2.4 tonight?').getByRole('button', { name: 'Ship' }).click();
    await page.getByTestId('inbox-status').getByText('Answered “Ship 2.4 tonight?”: Ship.').waitFor(WAIT);
    await entry('Ship 2.4 tonight?').waitFor({ state: 'detached', ...WAIT });
    expect(await api<Ask>('GET', `/api/v1/asks/${choice.id}`)).toMatchObject({ status: 'answered', answer: { option: 'Ship' } });

    await entry('Which region first?').getByRole('textbox').fill('us-east, then eu-west');
    await entry('Which region first?').getByRole('button', { name: 'Answer' }).click();
    await entry('Which region first?').waitFor({ state: 'detached', ...WAIT });
    expect(await api<Ask>('GET', `/api/v1/asks/${free.id}`)).toMatchObject({ status: 'answered', answer: { text: 'us-east, then eu-west' } });

    await entry('Approve tasks_delete?').getByRole('button', { name: 'Approve' }).click();
    await page.getByTestId('inbox-status').getByText('Approved: tasks_delete.').waitFor(WAIT);
    await entry('Approve tasks_delete?').waitFor({ state: 'detached', ...WAIT });
    expect((await h.t.request('GET', `/api/v1/tasks/${doomed.id}`)).status).toBe(404);

    // Request changes needs a comment: the page says so before sending anything.
    await entry('Write the 2.4 release notes').getByRole('button', { name: 'Request changes' }).click();
    await page.getByText('a request for changes needs a comment').waitFor(WAIT);
    // The comment field takes the focus, so the comment can be typed at once.
    expect(await entry('Write the 2.4 release notes').getByRole('textbox').evaluate((field) => field === document.activeElement)).toBe(true);
    await entry('Write the 2.4 release notes').getByRole('textbox').fill('Mention the new rate limits.');
    await entry('Write the 2.4 release notes').getByRole('button', { name: 'Request changes' }).click();
    await entry('Write the 2.4 release notes').waitFor({ state: 'detached', ...WAIT });
    expect((await api<Json>('GET', `/api/v1/tasks/${review.id}`)).status).toBe('in_progress');

    // The answered asks and the reviewed work turned done on the server; the mention is the one unread item left.
    await page.getByTestId('inbox-badge').getByText('1').waitFor(WAIT);
  });

  it('walks the items with j and k, marks the focused one done with e, opens one with Enter, and filters by state and kind', async () => {
    await page.goto(`${h.base}/inbox`);
    await entry('the changelog is ready').waitFor(WAIT);
    await page.keyboard.press('j');
    expect(await page.evaluate(() => document.activeElement?.closest('[data-entry]')?.textContent)).toContain('the changelog is ready');
    await page.keyboard.press('e');
    await entry('the changelog is ready').waitFor({ state: 'detached', ...WAIT });
    await page.getByTestId('inbox-badge').waitFor({ state: 'detached', ...WAIT });
    const done = await api<Inbox>('GET', '/api/v1/inbox?state=done&kind=mention');
    expect(done.data).toHaveLength(1);

    await page.getByRole('button', { name: /^Done/ }).click();
    await entry('the changelog is ready').waitFor(WAIT);
    await page.getByRole('button', { name: /^All/ }).click();
    await page.getByLabel('Kind').selectOption('ask');
    await entry('Ship 2.4 tonight?').getByTestId('ask-closed').getByText('Answered: “Ship”').waitFor(WAIT);
    // The filtered page replaces the whole list once it has come back.
    await entry('the changelog is ready').waitFor({ state: 'detached', ...WAIT });
    expect(await page.locator('li.inbox-item').evaluateAll((items) => items.map((i) => i.getAttribute('data-kind')))).toEqual(['ask', 'ask']);
    await page.getByLabel('Kind').selectOption('mention');
    await entry('the changelog is ready').getByRole('button', { name: 'Back to unread' }).click();
    await page.getByTestId('inbox-badge').getByText('1').waitFor(WAIT);
    expect(await axeEverywhere(page, 'inbox, all mentions')).toEqual([]);

    await page.locator('li.inbox-item .inbox-link').first().focus();
    await page.keyboard.press('Escape');
    await page.keyboard.press('k');
    await page.keyboard.press('Enter');
    await page.waitForURL(/\/tasks\/tsk_/);
    // Opening it marked it read.
    await page.getByTestId('inbox-badge').waitFor({ state: 'detached', ...WAIT });
  });

  it('shows a new ask live, with a browser notification when they were turned on', async () => {
    await page.goto(`${h.base}/inbox`);
    await page.getByText('Nothing waits on you').waitFor(WAIT);
    await page.evaluate(() => {
      const g = globalThis as unknown as { raised: string[]; Notification: unknown };
      g.raised = [];
      g.Notification = class {
        static permission = 'granted';
        static requestPermission = () => Promise.resolve('granted');
        constructor(title: string, options: { body: string }) {
          g.raised.push(`${title}: ${options.body}`);
        }
      };
    });
    // The toggle was drawn before the stub: it is turned on the way the page keeps it.
    await page.evaluate(() => localStorage.setItem('baton.inbox.notify', 'on'));
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Rotate the keys' });
    await asAgent('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'Rotate the keys now?', options: [{ label: 'Yes' }, { label: 'Later' }], to: me, timeout_s: 600, default: { option: 'Later' } });
    await entry('Rotate the keys now?').getByRole('button', { name: 'Later' }).waitFor(WAIT);
    await page.getByTestId('inbox-badge').getByText('1').waitFor(WAIT);
    await page.waitForFunction(() => (globalThis as unknown as { raised: string[] }).raised.length === 1);
    expect(await page.evaluate(() => (globalThis as unknown as { raised: string[] }).raised)).toEqual(['Baton: 1 unread in your inbox: Rotate the keys now?']);
    const inbox = await api<Inbox>('GET', '/api/v1/inbox?state=unread');
    expect(inbox.counts.unread).toBe(1);
  });

  it('says who asked each ask (was the question alone: nothing named the agent waiting on the answer)', async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Flush the cache' });
    await asAgent('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'Flush the EU cache too?', to: me, timeout_s: 600, default: { text: 'no' } });
    await page.goto(`${h.base}/inbox`);
    const asked = entry('Flush the EU cache too?').getByTestId('asked-by');
    await asked.waitFor(WAIT);
    expect(await asked.textContent()).toMatch(/^Asked by\s*Agent\s*ship-bot$/);
  });

  it('renders a hand-in summary as Markdown, as the task page does (was the raw “**” and “`”)', async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Fix the checkout timeout' });
    await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    await asAgent('POST', `/api/v1/tasks/${task.id}/hand_in`, { summary: 'Fixed. **How to check:** run `npm test`.\n\n- raised the timeout\n- added a test' });
    await page.goto(`${h.base}/inbox`);
    const handoff = entry('Fix the checkout timeout').getByTestId('handoff');
    await handoff.waitFor(WAIT);
    expect(await handoff.locator('strong').textContent()).toBe('How to check:');
    expect(await handoff.locator('code').textContent()).toBe('npm test');
    expect(await handoff.locator('li').allTextContents()).toEqual(['raised the timeout', 'added a test']);
    expect(await handoff.textContent()).not.toContain('**');
  });

  it('names what an approval acts on, read now (was the bare task id, so a deletion was approved blind)', async () => {
    const doomed = await asAgent('POST', '/api/v1/tasks', { title: 'Drop the 2.3 branch' });
    await h.t.request('DELETE', `/api/v1/tasks/${doomed.id}`, { token: agent.token });
    await page.goto(`${h.base}/inbox`);
    const target = entry('Approve tasks_delete?').getByTestId('approval-target');
    await target.waitFor(WAIT);
    expect(await target.getByRole('link').textContent()).toBe('Drop the 2.3 branch');
    expect(await target.getByRole('link').getAttribute('href')).toBe(`/tasks/${doomed.id}`);
  });
});
