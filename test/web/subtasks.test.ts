import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type BrowserHarness, startBrowser, signIn, WAIT } from './browser.ts';


describe('subtasks, due dates and search in the web app', () => {
  let h: BrowserHarness;
  let page: Page;
  const ids: Record<string, string> = {};

  const create = async (body: Record<string, unknown>) => {
    const res = await h.t.request('POST', '/api/v1/tasks', { body });
    if (res.status !== 201) throw new Error(`create: ${res.status} ${res.body}`);
    return res.json<{ id: string }>().id;
  };

  beforeAll(async () => {
    h = await startBrowser();
    ids.parent = await create({ title: 'Ship the release' });
    ids.child = await create({ title: 'Write the changelog', parent_id: ids.parent, due_at: '2020-01-01T00:00:00Z' });
    ids.other = await create({ title: 'Tag the build', parent_id: ids.parent });
    await h.t.request('POST', `/api/v1/tasks/${ids.other}/comments`, { body: { body: 'Needs the signing key from the vault.' } });
    page = await h.context.newPage();
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('marks overdue subtasks on the board, and searches titles, descriptions and comments on the server', async () => {
    const card = page.locator(`[data-task-id="${ids.child}"]`);
    await card.locator('.overdue', { hasText: 'Overdue' }).waitFor(WAIT);
    expect(await card.locator('.subtask-of a').getAttribute('href')).toBe(`/tasks/${ids.parent}`);

    await page.getByLabel('Search titles, descriptions and comments').fill('signing keys');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.getByRole('status').filter({ hasText: '1 match' }).waitFor(WAIT);
    expect(await page.locator('[data-task-id]').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-task-id')))).toEqual([ids.other]);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.locator(`[data-task-id="${ids.parent}"]`).waitFor(WAIT);
    // The box empties a frame after the URL does; typing before that is typed into the old value.
    const box = page.getByLabel('Search titles, descriptions and comments');
    await expect.poll(() => box.inputValue(), WAIT).toBe('');

    await box.fill('the');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await page.locator('.problem, [role=alert]').filter({ hasText: /search/i }).first().waitFor(WAIT);
  });

  it('shows a parent its subtasks by status, and a subtask its parent', async () => {
    await page.goto(`${h.base}/tasks/${ids.parent}`);
    const panel = page.locator('.subtasks');
    await panel.getByRole('heading', { name: 'Subtasks' }).waitFor(WAIT);
    await panel.locator('.child-count', { hasText: '2' }).waitFor(WAIT);
    await panel.getByRole('link', { name: 'Write the changelog' }).waitFor(WAIT);
    await panel.getByRole('link', { name: 'Tag the build' }).click();
    await page.getByRole('heading', { name: 'Tag the build' }).waitFor(WAIT);
    await page.locator('.parent-link').getByRole('link', { name: 'Ship the release' }).waitFor(WAIT);
  });
});
