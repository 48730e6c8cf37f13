import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';
import { axeEverywhere } from './axe.ts';

interface Json {
  id: string;
  version: number;
  status: string;
  archived_at?: string;
}

/** Archive in the app (issue 43 §8): from the task page and the board, bulk with undo, and the board's "Show archived". */
describe('archiving in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  const api = apiOf(() => h);
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const tick = (title: string) => page.getByRole('checkbox', { name: `Select ${title}` });
  const bar = () => page.getByRole('region', { name: 'Bulk actions' });
  const report = () => page.getByTestId('bulk-report');
  const toast = () => page.locator('.undo-toast');
  const showArchived = () => page.getByRole('checkbox', { name: 'Show archived' });
  const read = (id: string) => api<Json>('GET', `/api/v1/tasks/${id}`);
  /** A task made and cancelled over the API: finished work, which may be archived. */
  const cancelled = async (title: string) => {
    const task = await api<Json>('POST', '/api/v1/tasks', { title });
    return api<Json>('PATCH', `/api/v1/tasks/${task.id}`, { status: 'cancelled' });
  };

  beforeAll(async () => {
    h = await startBrowser();
    page = await adminPage(h, { axe: true });
    await page.locator('.live-stream').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('archives from the task page: the task leaves the board, and "Show archived" brings it back', { timeout: 120_000 }, async () => {
    const task = await cancelled('Old migration plan');
    await api('POST', '/api/v1/tasks', { title: 'Live work stays' });
    await page.goto(`${h.base}/tasks/${task.id}`);
    // No wait for the live feed: the app reads where the feed starts before it shows any view
    // (web/src/main.tsx), so an archive right after the page loads still reaches the timeline.
    const archiveCard = page.getByTestId('archive-card');
    await archiveCard.getByRole('button', { name: 'Archive task' }).click();
    await toast().filter({ hasText: 'Archived “Old migration plan”.' }).waitFor(WAIT);
    await archiveCard.getByRole('button', { name: 'Unarchive' }).waitFor(WAIT);
    await page.locator('.task-head .status-archived').waitFor(WAIT);
    expect((await read(task.id)).archived_at).toEqual(expect.any(String));
    expect(await axeEverywhere(page, 'task page of an archived task')).toEqual([]);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}archived-task-1280.png` });
    // The timeline says so in words.
    await page.getByText('archived it').first().waitFor(WAIT);

    await page.goto(h.base);
    await card('Live work stays').waitFor(WAIT);
    expect(await card('Old migration plan').count()).toBe(0);
    await showArchived().check();
    await card('Old migration plan').locator('.status-archived').waitFor(WAIT);
    expect(page.url()).toContain('archived=show');
    expect(await axeEverywhere(page, 'board showing archived tasks')).toEqual([]);
    await page.screenshot({ path: `${SHOTS}archived-board-1280.png` });
    // Unarchived from its card, it stays on the board without the mark.
    await card('Old migration plan').getByRole('button', { name: 'Unarchive “Old migration plan”' }).click();
    await card('Old migration plan').locator('.status-archived').waitFor({ state: 'detached', ...WAIT });
    expect((await read(task.id)).archived_at).toBeUndefined();
    await showArchived().uncheck();
    await card('Old migration plan').waitFor(WAIT);
  });

  it('archives a finished card from the board, and a task archived elsewhere leaves the board live', { timeout: 120_000 }, async () => {
    const mine = await cancelled('Card archive');
    const theirs = await cancelled('Archived elsewhere');
    await page.goto(h.base);
    await card('Archived elsewhere').waitFor(WAIT);
    // Only finished cards offer it.
    expect(await card('Live work stays').getByRole('button', { name: /^Archive/ }).count()).toBe(0);
    await card('Card archive').getByRole('button', { name: 'Archive “Card archive”' }).click();
    await card('Card archive').waitFor({ state: 'detached', ...WAIT });
    await toast().filter({ hasText: 'Archived “Card archive”.' }).waitFor(WAIT);
    expect((await read(mine.id)).archived_at).toEqual(expect.any(String));

    await api('PATCH', `/api/v1/tasks/${theirs.id}`, { archived: true });
    await card('Archived elsewhere').waitFor({ state: 'detached', ...WAIT });
  });

  it('bulk archives the selected cards, each result shown (an open one refused), and Undo unarchives them', { timeout: 120_000 }, async () => {
    const one = await cancelled('Bulk archive one');
    const two = await cancelled('Bulk archive two');
    await api('POST', '/api/v1/tasks', { title: 'Bulk still open' });
    await page.goto(h.base);
    await card('Bulk still open').waitFor(WAIT);
    for (const title of ['Bulk archive one', 'Bulk archive two', 'Bulk still open']) await tick(title).click();
    await bar().getByText('3 tasks selected').waitFor(WAIT);
    await bar().getByRole('button', { name: 'Archive 3' }).click();
    await report().getByText('Archive: 2 done, 1 refused.').waitFor(WAIT);
    await report().locator('[data-outcome="refused"]', { hasText: 'Bulk still open' }).getByText('Task is not finished').waitFor(WAIT);
    await card('Bulk archive one').waitFor({ state: 'detached', ...WAIT });
    await card('Bulk archive two').waitFor({ state: 'detached', ...WAIT });
    expect(await axeEverywhere(page, 'board after a bulk archive')).toEqual([]);
    for (const task of [one, two]) expect((await read(task.id)).archived_at).toEqual(expect.any(String));

    await toast().filter({ hasText: 'Archive: 2 tasks.' }).getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Undone: Archive: 2 tasks.' }).waitFor(WAIT);
    await report().getByText('Undo Archive: 2 done.').waitFor(WAIT);
    await card('Bulk archive one').waitFor(WAIT);
    await card('Bulk archive two').waitFor(WAIT);
    for (const task of [one, two]) expect((await read(task.id)).archived_at).toBeUndefined();
  });
});
