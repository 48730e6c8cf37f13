import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type BrowserHarness, startBrowser, signIn, WAIT } from './browser.ts';


interface TaskJson {
  id: string;
  status: string;
  version: number;
}

/** The board at scale and by keyboard: keys, moves without a mouse, drag and drop, filters in the URL, paged columns. */
describe('the board by keyboard and at scale, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;

  const api = async <T = TaskJson>(method: string, url: string, body?: unknown) => {
    const res = await h.t.request(method, url, body === undefined ? {} : { body });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const column = (status: string) => page.locator(`section.column[data-status="${status}"]`);
  const focusedCard = () => page.evaluate(() => document.activeElement?.closest('[data-task-id]')?.querySelector('.task-title')?.textContent ?? null);

  beforeAll(async () => {
    h = await startBrowser();
    await api('POST', '/api/v1/tasks', { title: 'Patch the login redirect', priority: 'urgent', labels: ['auth'] });
    await api('POST', '/api/v1/tasks', { title: 'Tidy the release checklist', priority: 'high', labels: ['docs'] });
    await api('POST', '/api/v1/tasks', { title: 'Archive old build logs', priority: 'low', labels: ['ops'] });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
    await card('Archive old build logs').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });
  // Each test starts from the board as a fresh visit shows it, whatever the one before left open.
  beforeEach(async () => {
    await page.goto(h.base);
    await card('Archive old build logs').waitFor(WAIT);
  });

  it('focuses search with `/`, walks the cards with `j` and `k`, and opens one with Enter', async () => {
    await page.keyboard.press('/');
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')), WAIT).toBe('Search titles, descriptions and comments');
    // Keys typed into the search box are text, not shortcuts.
    await page.keyboard.type('jk');
    await expect.poll(() => page.getByLabel('Search titles, descriptions and comments').inputValue(), WAIT).toBe('jk');
    expect(await page.locator('.task-card-selected').count()).toBe(0);
    await page.getByLabel('Search titles, descriptions and comments').fill('');
    await page.locator('#board-title').click();

    // To do, sorted by priority: urgent, high, low.
    await page.keyboard.press('j');
    await expect.poll(focusedCard, WAIT).toBe('Patch the login redirect');
    await page.keyboard.press('j');
    await expect.poll(focusedCard, WAIT).toBe('Tidy the release checklist');
    await page.keyboard.press('j');
    await expect.poll(focusedCard, WAIT).toBe('Archive old build logs');
    await page.keyboard.press('k');
    await expect.poll(focusedCard, WAIT).toBe('Tidy the release checklist');
    await page.locator('.task-card-selected', { hasText: 'Tidy the release checklist' }).waitFor(WAIT);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Tidy the release checklist' }).waitFor(WAIT);
    await page.goBack();
    await card('Archive old build logs').waitFor(WAIT);
  });

  it('moves a card from the keyboard with `m`, announces it, and explains a refused move', async () => {
    await page.locator('#board-title').click();
    await page.keyboard.press('j');
    await expect.poll(focusedCard, WAIT).toBe('Patch the login redirect');
    await page.keyboard.press('m');
    const options = page.getByRole('group', { name: 'Move “Patch the login redirect” to' });
    await options.waitFor(WAIT);
    // The first legal target has focus; Tab reaches the next.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), WAIT).toBe('In progress');
    await page.keyboard.press('Tab');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), WAIT).toBe('Blocked');
    await page.keyboard.press('Enter');
    await column('blocked').locator('article.task-card', { hasText: 'Patch the login redirect' }).waitFor(WAIT);
    await page.getByRole('status').filter({ hasText: 'Moved “Patch the login redirect” to Blocked.' }).waitFor(WAIT);
    // Focus stays on the card in its new column.
    await expect.poll(focusedCard, WAIT).toBe('Patch the login redirect');

    // Blocked → Done is not allowed: the server's problem is shown and the card stays.
    await page.keyboard.press('m');
    await expect.poll(() => page.evaluate(() => document.activeElement?.closest('[role=group]')?.getAttribute('aria-label')), WAIT).toBe('Move “Patch the login redirect” to');
    await options.getByRole('button', { name: 'Done' }).focus();
    await page.keyboard.press('Enter');
    const notice = page.getByRole('alert');
    await notice.filter({ hasText: 'Could not move “Patch the login redirect” from Blocked to Done' }).waitFor(WAIT);
    expect(await notice.textContent()).toContain('From `blocked` a task may move to'.replaceAll('`', ''));
    await column('blocked').locator('article.task-card', { hasText: 'Patch the login redirect' }).waitFor(WAIT);
    expect(await column('done').locator('article.task-card').count()).toBe(0);
    await notice.getByRole('button', { name: 'Dismiss' }).click();
  });

  it('moves a task by drag and drop through the server, and puts a refused card back', async () => {
    await card('Archive old build logs').dragTo(column('blocked'));
    await column('blocked').locator('article.task-card', { hasText: 'Archive old build logs' }).waitFor(WAIT);
    // The card moves at once; the server's answer follows.
    const blocked = async () => (await api<{ data: (TaskJson & { title: string })[] }>('GET', '/api/v1/tasks?status=blocked')).data.map((t) => t.title);
    await expect.poll(blocked, { timeout: 15_000 }).toContain('Archive old build logs');

    await card('Tidy the release checklist').dragTo(column('done'));
    await page.getByRole('alert').filter({ hasText: 'Could not move “Tidy the release checklist” from To do to Done' }).waitFor(WAIT);
    await column('todo').locator('article.task-card', { hasText: 'Tidy the release checklist' }).waitFor(WAIT);
    expect(await column('done').locator('article.task-card').count()).toBe(0);
    await page.getByRole('alert').getByRole('button', { name: 'Dismiss' }).click();
  });

  it('keeps filters, search and sort in the URL: reload, back and forward restore them', async () => {
    await page.getByLabel('Filter by priority').selectOption('high');
    await page.waitForURL(/\?priority=high$/);
    await card('Patch the login redirect').waitFor({ state: 'detached', ...WAIT });
    await expect.poll(() => page.locator('article.task-card').count(), WAIT).toBe(1);

    await page.reload();
    await card('Tidy the release checklist').waitFor(WAIT);
    await expect.poll(() => page.getByLabel('Filter by priority').inputValue(), WAIT).toBe('high');
    await expect.poll(() => page.locator('article.task-card').count(), WAIT).toBe(1);

    await page.getByLabel('Filter by priority').selectOption('');
    await page.getByLabel('Search titles, descriptions and comments').fill('login');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.waitForURL(/\?q=login$/);
    await page.getByRole('status').filter({ hasText: '1 match' }).waitFor(WAIT);
    expect(await page.locator('article.task-card .task-title').allTextContents()).toEqual(['Patch the login redirect']);

    await page.goBack();
    await page.waitForURL((url) => url.search === '');
    await card('Archive old build logs').waitFor(WAIT);
    await page.goBack();
    await page.waitForURL(/\?priority=high$/);
    await card('Archive old build logs').waitFor({ state: 'detached', ...WAIT });
    await expect.poll(() => page.getByLabel('Filter by priority').inputValue(), WAIT).toBe('high');
    await page.goForward();
    await page.goForward();
    await page.waitForURL(/\?q=login$/);
    await expect.poll(() => page.getByLabel('Search titles, descriptions and comments').inputValue(), WAIT).toBe('login');

    // A shared link opens the same board, sort included.
    await page.goto(`${h.base}/?label=docs&sort=title`);
    await card('Tidy the release checklist').waitFor(WAIT);
    await expect.poll(() => page.getByLabel('Filter by label').inputValue(), WAIT).toBe('docs');
    await expect.poll(() => page.getByLabel('Sort').inputValue(), WAIT).toBe('title');
    await expect.poll(() => page.locator('article.task-card').count(), WAIT).toBe(1);
  });

  it('renders a column of more tasks than a page a page at a time', async () => {
    for (let i = 0; i < 70; i++) await api('POST', '/api/v1/tasks', { title: `Bulk task ${String(i).padStart(2, '0')}`, labels: ['bulk'] });
    await page.goto(`${h.base}/?label=bulk&sort=title`);
    const todo = column('todo');
    await todo.getByRole('heading').filter({ hasText: '70' }).waitFor(WAIT);
    expect(await todo.locator('article.task-card').count()).toBe(30);
    await todo.getByRole('button', { name: /^Show 30 more/ }).click();
    expect(await todo.locator('article.task-card').count()).toBe(60);
    await todo.getByRole('button', { name: /^Show 10 more/ }).click();
    expect(await todo.locator('article.task-card').count()).toBe(70);
    expect(await todo.getByRole('button', { name: /^Show/ }).count()).toBe(0);
    expect(await todo.locator('article.task-card .task-title').last().textContent()).toBe('Bulk task 69');

    // `j` past a column's last rendered card shows its next page and walks on; `k` walks back.
    await page.goto(`${h.base}/?label=bulk&sort=title`);
    await todo.getByRole('heading').filter({ hasText: '70' }).waitFor(WAIT);
    await todo.locator('article.task-card .task-title', { hasText: 'Bulk task 29' }).focus();
    await page.keyboard.press('j');
    await expect.poll(focusedCard, WAIT).toBe('Bulk task 30');
    expect(await todo.locator('article.task-card').count()).toBe(60);
    await page.keyboard.press('k');
    await expect.poll(focusedCard, WAIT).toBe('Bulk task 29');

    // A search reads past its first page of 100 matches.
    for (let i = 0; i < 40; i++) await api('POST', '/api/v1/tasks', { title: `Bulk extra ${String(i).padStart(2, '0')}`, labels: ['bulk-extra'] });
    await page.goto(`${h.base}/?q=bulk`);
    await page.getByRole('status').filter({ hasText: '110 matches for “bulk”' }).waitFor(WAIT);
    await column('todo').getByRole('heading').filter({ hasText: '110' }).waitFor(WAIT);
  });
});
