import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';

interface Json {
  id: string;
  status: string;
  version: number;
  archived_at?: string;
  assignee?: { id: string } | null;
  lease?: { epoch: number } | null;
}

/** Ctrl/Cmd+K: go to a task by title or id prefix, act on the selected task; `?` lists the shortcuts. */
describe('the command palette and the shortcuts, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let upgrade: Json;
  let rotate: Json;
  const api = apiOf(() => h);
  const palette = () => page.getByRole('dialog', { name: 'Command palette' });
  const input = () => palette().getByRole('combobox');
  const active = () => palette().locator('[role=option][aria-selected=true]');

  beforeAll(async () => {
    h = await startBrowser();
    upgrade = await api<Json>('POST', '/api/v1/tasks', { title: 'Upgrade the database' });
    rotate = await api<Json>('POST', '/api/v1/tasks', { title: 'Rotate certificates' });
    page = await adminPage(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('goes to a task by title, then moves it from the palette on its page (a refused move explained)', async () => {
    await page.keyboard.press('Control+k');
    await input().waitFor(WAIT);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('role'))).toBe('combobox');
    // The start of a word finds it: the server's search matches as you type.
    await page.keyboard.type('datab');
    await active().getByText('Upgrade the database').waitFor(WAIT);
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/tasks/${upgrade.id}`);
    await palette().waitFor({ state: 'hidden', ...WAIT });

    await page.keyboard.press('Control+k');
    // The first action opens the task; moves follow, never Done or Cancelled first.
    await active().getByText('Open “Upgrade the database”').waitFor(WAIT);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}palette-1280.png` });
    // Delete (asked first) is the very last.
    const labels = await palette().locator('[role=option]').allTextContents();
    expect(labels.at(-1)).toMatch(/Delete “Upgrade the database”…$/);
    expect(labels.at(-2)).toMatch(/to (Done|Cancelled)$/);
    await page.keyboard.type('in progress');
    await active().getByText('Move “Upgrade the database” to In progress').waitFor(WAIT);
    await page.keyboard.press('Enter');
    // The server's refusal is explained in place, with its hint.
    await palette().getByText('only through tasks_claim').waitFor(WAIT);
    await input().fill('');
    await page.keyboard.type('blocked');
    await active().getByText('Move “Upgrade the database” to Blocked').waitFor(WAIT);
    await page.keyboard.press('Enter');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    expect((await api<Json>('GET', `/api/v1/tasks/${upgrade.id}`)).status).toBe('blocked');
  });

  it('goes to a task by the start of its id, with the arrow keys', async () => {
    await page.keyboard.press('Control+k');
    await page.keyboard.type(rotate.id.slice(0, 12));
    await palette().getByRole('option', { name: /Rotate certificates/ }).waitFor(WAIT);
    // Actions on the open task come first while they match; the arrows reach the task.
    while (!((await active().textContent()) ?? '').includes('Rotate certificates')) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await page.waitForURL(`**/tasks/${rotate.id}`);
  });

  it('lists the shortcuts on ?, and Escape closes them', async () => {
    await page.locator('main').focus();
    await page.keyboard.press('?');
    const keys = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
    await keys.getByText('Ctrl/Cmd+K').waitFor(WAIT);
    expect(await keys.textContent()).toContain('Select the next / previous card');
    await page.keyboard.press('Escape');
    await keys.waitFor({ state: 'hidden', ...WAIT });
  });

  it('runs the task page’s actions on the open task: assign to me, comment, request changes, approve the review, delete', async () => {
    const agent = await h.t.addPrincipal({ name: 'palette-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    const handedIn = async (title: string) => {
      const task = await api<Json>('POST', '/api/v1/tasks', { title }, agent.token);
      const held = await api<Json>('POST', `/api/v1/tasks/${task.id}/claim`, {}, agent.token);
      return api<Json>('PATCH', `/api/v1/tasks/${task.id}`, { status: 'in_review', lease_epoch: held.lease?.epoch }, agent.token);
    };
    const me = (await api<{ principal: { id: string } }>('GET', '/api/v1/whoami')).principal.id;
    const read = (id: string) => api<Json>('GET', `/api/v1/tasks/${id}?view=full`);
    const run = async (text: string, option: string) => {
      await page.keyboard.press('Control+k');
      await active().getByText('Open “').waitFor(WAIT);
      await page.keyboard.type(text);
      await palette().getByRole('option', { name: option }).waitFor(WAIT);
      while (!((await active().textContent()) ?? '').includes(option)) await page.keyboard.press('ArrowDown');
      await page.keyboard.press('Enter');
    };

    const shipped = await handedIn('Ship the exporter');
    await page.goto(`${h.base}/tasks/${shipped.id}`);
    await page.getByRole('heading', { name: 'Ship the exporter' }).waitFor(WAIT);
    await run('to me', 'Assign “Ship the exporter” to me');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    await expect.poll(async () => (await read(shipped.id)).assignee?.id, WAIT).toBe(me);
    await run('approve', 'Approve the review of “Ship the exporter”');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    await expect.poll(async () => (await read(shipped.id)).status, WAIT).toBe('done');

    const draft = await handedIn('Draft the changelog');
    await page.goto(`${h.base}/tasks/${draft.id}`);
    await page.getByRole('heading', { name: 'Draft the changelog' }).waitFor(WAIT);
    await run('Name the breaking changes', 'Comment on “Draft the changelog”: Name the breaking changes');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    const comments = await api<{ data: { body: string }[] }>('GET', `/api/v1/tasks/${draft.id}/comments`);
    expect(comments.data.map((c) => c.body)).toEqual(['Name the breaking changes']);
    await run('List the migrations too', 'Request changes on “Draft the changelog”: List the migrations too');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    await expect.poll(async () => (await read(draft.id)).status, WAIT).toBe('in_progress');

    // Delete asks first, as on the task page; confirmed, the task is gone and the board shows.
    await run('delete', 'Delete “Draft the changelog”…');
    await page.getByRole('alertdialog', { name: 'Delete “Draft the changelog”?' }).getByRole('button', { name: 'Delete task' }).click();
    await page.waitForURL(`${h.base}/`);
    expect((await h.t.request('GET', `/api/v1/tasks/${draft.id}`)).status).toBe(404);
    // Opened on the page of a task that is gone, the palette says why it offers no action on it.
    await page.goto(`${h.base}/tasks/${draft.id}`);
    await page.getByRole('main').getByText(/No task/).first().waitFor(WAIT);
    await page.keyboard.press('Control+k');
    await input().waitFor(WAIT);
    await palette().getByRole('alert').getByText(/No task/).waitFor(WAIT);
    expect(await palette().locator('[role=option]').count()).toBe(0);
    await page.keyboard.press('Escape');
    await palette().waitFor({ state: 'hidden', ...WAIT });
  });

  it('archives a done task from the palette on the board (it leaves the board), and unarchives it on its page', async () => {
    const agent = await h.t.addPrincipal({ name: 'archive-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const task = await api<Json>('POST', '/api/v1/tasks', { title: 'Publish the release notes' }, agent.token);
    const held = await api<Json>('POST', `/api/v1/tasks/${task.id}/claim`, {}, agent.token);
    await api('PATCH', `/api/v1/tasks/${task.id}`, { status: 'in_review', lease_epoch: held.lease?.epoch }, agent.token);
    await api('POST', `/api/v1/tasks/${task.id}/review`, { decision: 'approve' });
    const card = page.locator('section.column[data-status="done"] article.task-card', { hasText: 'Publish the release notes' });
    await page.goto(h.base);
    await card.waitFor(WAIT);

    // The card in focus is the task the palette acts on.
    await card.locator('.task-title').focus();
    await page.keyboard.press('Control+k');
    await input().waitFor(WAIT);
    await page.keyboard.type('archive');
    const archive = palette().getByRole('option', { name: 'Archive “Publish the release notes”' });
    await archive.waitFor(WAIT);
    while (!((await active().textContent()) ?? '').includes('Archive “Publish the release notes”')) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    await card.waitFor({ state: 'detached', ...WAIT });
    await expect.poll(async () => (await api<Json>('GET', `/api/v1/tasks/${task.id}`)).archived_at, WAIT).toEqual(expect.any(String));
    await page.reload();
    await page.locator('article.task-card').first().waitFor(WAIT);
    expect(await card.count()).toBe(0);

    // On its page the palette offers the way back.
    await page.goto(`${h.base}/tasks/${task.id}`);
    await page.getByRole('heading', { name: 'Publish the release notes' }).waitFor(WAIT);
    await page.keyboard.press('Control+k');
    await active().getByText('Open “').waitFor(WAIT);
    await page.keyboard.type('unarchive');
    await palette().getByRole('option', { name: 'Unarchive “Publish the release notes”' }).waitFor(WAIT);
    while (!((await active().textContent()) ?? '').includes('Unarchive “Publish the release notes”')) await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    await palette().waitFor({ state: 'hidden', ...WAIT });
    await expect.poll(async () => (await api<Json>('GET', `/api/v1/tasks/${task.id}`)).archived_at, WAIT).toBeUndefined();
  });
});
