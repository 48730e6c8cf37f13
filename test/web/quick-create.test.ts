import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { adminPage, apiOf, type BrowserHarness, startBrowser, WAIT } from './browser.ts';

interface Created {
  id: string;
  title: string;
  priority: string;
  labels: string[];
  assignee: { id: string } | null;
  parent_id: string | null;
  due_at: string | null;
  not_before: string | null;
  max_attempts: number | null;
}

/** "New task" from the keyboard alone: every field reached with Tab and set with keys, Ctrl+Enter creates. */
describe('quick create from the keyboard, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let bot: Principal;
  const api = apiOf(() => h);
  /** Presses Tab until the element with this id has focus (at most 30 times), as a keyboard user would. */
  const tabTo = async (id: string) => {
    for (let i = 0; i < 30; i++) {
      if (await page.evaluate((want) => document.activeElement?.id === want, id)) return;
      await page.keyboard.press('Tab');
    }
    throw new Error(`Tab never reached #${id}`);
  };

  beforeAll(async () => {
    h = await startBrowser();
    bot = await h.t.addPrincipal({ name: 'ops-bot', scopes: ['tasks:read', 'tasks:claim'] });
    await api('POST', '/api/v1/tasks', { title: 'Quarterly release train' });
    page = await adminPage(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('sets priority, labels, assignee, parent, due date and not-before with keys only, and Ctrl+Enter creates the task', async () => {
    await page.keyboard.press('c');
    await page.getByRole('dialog', { name: 'New task' }).waitFor(WAIT);
    await page.keyboard.type('Cut the release branch');

    await tabTo('new-task-priority');
    await page.keyboard.type('urgent');
    await tabTo('new-task-labels');
    await page.keyboard.type('release, ops');
    await tabTo('new-task-assignee');
    await page.keyboard.type('ops-b');
    await page.getByRole('option', { name: 'ops-bot', exact: true }).waitFor(WAIT);
    // Tab takes the highlighted match on the way to the next field, as a select takes what was typed.
    await tabTo('new-task-parent');
    expect(await page.locator('#new-task-assignee').inputValue()).toBe('ops-bot');
    await page.keyboard.type('release train');
    const match = page.getByRole('list', { name: 'Matching parents' }).getByRole('button', { name: /Quarterly release train/ });
    await match.waitFor(WAIT);
    await page.keyboard.press('Tab');
    expect(await match.evaluate((el) => el === document.activeElement)).toBe(true);
    await page.keyboard.press('Enter');
    await page.getByTestId('chosen-parent').getByText('Quarterly release train').waitFor(WAIT);
    // Focus is on the chosen parent's Remove as soon as it shows (a frame later, under load, it
    // once jumped back there while the due date was being typed).
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? '')).toMatch(/^Remove parent/);
    // Typed segment by segment, as in any Chromium date field: month, day, year, hour, minute, AM/PM.
    await tabTo('new-task-due');
    await page.keyboard.type('12312030');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.type('0930AM');
    await tabTo('new-task-not-before');
    await page.keyboard.type('06012030');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.type('0800AM');
    expect(await page.locator('#new-task-due').inputValue()).toBe('2030-12-31T09:30');
    expect(await page.locator('#new-task-not-before').inputValue()).toBe('2030-06-01T08:00');
    await tabTo('new-task-attempts');
    await page.keyboard.type('3');

    await page.keyboard.press('Control+Enter');
    await page.getByRole('dialog', { name: 'New task' }).waitFor({ state: 'hidden', ...WAIT });
    const list = await api<{ data: Created[] }>('GET', '/api/v1/tasks?view=full&limit=10');
    const created = list.data.find((t) => t.title === 'Cut the release branch');
    const parent = list.data.find((t) => t.title === 'Quarterly release train');
    // The fields are in the browser's zone.
    const local = (value: string) => page.evaluate((v) => new Date(v).toISOString(), value);
    expect(created).toMatchObject({ priority: 'urgent', labels: ['release', 'ops'], assignee: { id: bot.id }, parent_id: parent?.id, max_attempts: 3 });
    expect(created?.due_at).toBe(await local('2030-12-31T09:30'));
    expect(created?.not_before).toBe(await local('2030-06-01T08:00'));
  });

  it('gives the parent search a usable width on a phone (it was squeezed to 60 px beside the assignee, its placeholder cut to “Sear”)', async () => {
    await page.goto(h.base);
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
      await page.keyboard.press('c');
      await page.getByRole('dialog', { name: 'New task' }).waitFor(WAIT);
      const width = await page.locator('#new-task-parent').evaluate((input) => input.getBoundingClientRect().width);
      expect(width).toBeGreaterThan(180);
      await page.keyboard.press('Escape');
    } finally {
      await page.setViewportSize({ width: 1280, height: 800 });
    }
  });
});
