import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { apiOf, type BrowserHarness, signIn, startBrowser, WAIT } from './browser.ts';

const AXE = createRequire(import.meta.url).resolve('axe-core');

interface TaskJson {
  id: string;
  title: string;
  status: string;
  version: number;
}

type Scheme = 'light' | 'dark';
const LOOKS: { scheme: Scheme; width: number }[] = [
  { scheme: 'light', width: 1280 },
  { scheme: 'dark', width: 1280 },
  { scheme: 'light', width: 390 },
  { scheme: 'dark', width: 390 },
];

/** Issue 43, items 7 and 8: saved views, hidden closed columns, collapsed columns, column tabs on a phone; undo, confirmations, delete. */
describe('board views, undo and safety, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  const api = apiOf(() => h);
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const column = (status: string) => page.locator(`section.column[data-status="${status}"]`);
  const toast = () => page.locator('.undo-toast');
  const statusOf = async (id: string) => (await api<TaskJson>('GET', `/api/v1/tasks/${id}`)).status;
  const look = async (scheme: Scheme, width: number) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
  };
  /** Serious and critical axe-core violations in every look (light and dark, 1280 and 390 px), `open` putting the state back after each resize. */
  const axeIn = async (state: string, open: () => Promise<void> = async () => undefined) => {
    const found: string[] = [];
    for (const { scheme, width } of LOOKS) {
      await look(scheme, width);
      await open();
      const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
      for (const v of results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
        found.push(...v.nodes.map((n) => `${state}, ${scheme}, ${width} px: ${v.id}: ${n.target.join(' ')}`));
      }
    }
    await look('light', 1280);
    return found;
  };

  let blocked: TaskJson;
  beforeAll(async () => {
    h = await startBrowser();
    await api('POST', '/api/v1/tasks', { title: 'Write the upgrade guide', priority: 'high', labels: ['docs'] });
    await api('POST', '/api/v1/tasks', { title: 'Rotate the deploy keys', priority: 'urgent', labels: ['ops'] });
    blocked = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Wait for the vendor', labels: ['ops'] });
    blocked = await api<TaskJson>('PATCH', `/api/v1/tasks/${blocked.id}`, { status: 'blocked' });
    const closed = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Drop the old cron job', labels: ['ops'] });
    await api('PATCH', `/api/v1/tasks/${closed.id}`, { status: 'cancelled' });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.addInitScript({ path: AXE });
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    await look('light', 1280);
    await page.goto(h.base);
    await card('Write the upgrade guide').waitFor(WAIT);
  });

  it('hides Done and Cancelled by a toggle kept in the URL', async () => {
    await card('Drop the old cron job').waitFor(WAIT);
    await page.getByLabel('Hide Done and Cancelled').check();
    await page.waitForURL(/\?hide=closed$/);
    await card('Drop the old cron job').waitFor({ state: 'detached', ...WAIT });
    expect(await column('done').count()).toBe(0);
    expect(await column('cancelled').count()).toBe(0);
    await page.reload();
    await card('Write the upgrade guide').waitFor(WAIT);
    expect(await page.getByLabel('Hide Done and Cancelled').isChecked()).toBe(true);
    expect(await column('cancelled').count()).toBe(0);
    await page.getByLabel('Hide Done and Cancelled').uncheck();
    await page.waitForURL((url) => url.search === '');
    await card('Drop the old cron job').waitFor(WAIT);
  });

  it('saves a view under a name, opens it from the list or its copied link, and forgets it', async () => {
    await page.getByLabel('Filter by label').selectOption('ops');
    await page.getByLabel('Sort').selectOption('title');
    await page.getByLabel('Hide Done and Cancelled').check();
    await page.waitForURL(/\?label=ops&sort=title&hide=closed$/);
    await page.getByRole('button', { name: 'Save view…' }).click();
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')), WAIT).toBe('View name');
    // The name field takes focus once, as it opens: a later render (a live update) leaves focus where the user put it.
    await page.getByRole('button', { name: 'Copy link' }).focus();
    await api('POST', '/api/v1/tasks', { title: 'Arrives while naming', labels: ['ops'] });
    await card('Arrives while naming').waitFor(WAIT);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Copy link');
    await page.getByLabel('View name').fill('Ops, open');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved view “Ops, open”.' }).waitFor(WAIT);
    await expect.poll(() => page.getByLabel('Saved views').inputValue(), WAIT).toBe('Ops, open');

    // A fresh visit, then the saved view restores filters, sort and the hidden columns.
    await page.goto(h.base);
    await card('Write the upgrade guide').waitFor(WAIT);
    await page.getByLabel('Saved views').selectOption('Ops, open');
    await page.waitForURL(/\?label=ops&sort=title&hide=closed$/);
    await card('Write the upgrade guide').waitFor({ state: 'detached', ...WAIT });
    expect(await page.locator('article.task-card .task-title').allTextContents()).toEqual(['Arrives while naming', 'Rotate the deploy keys', 'Wait for the vendor']);

    // Its link reproduces it in another tab.
    await page.getByRole('button', { name: 'Copy link' }).click();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(`${h.base}/?label=ops&sort=title&hide=closed`);
    const other = await h.context.newPage();
    await other.goto(h.base);
    await signIn(other, h.t.adminToken);
    await other.goto(link);
    await other.locator('article.task-card', { hasText: 'Wait for the vendor' }).waitFor(WAIT);
    expect(await other.getByLabel('Filter by label').inputValue()).toBe('ops');
    expect(await other.getByLabel('Hide Done and Cancelled').isChecked()).toBe(true);
    expect(await other.locator('section.column[data-status="cancelled"]').count()).toBe(0);
    await other.close();

    await page.getByRole('button', { name: 'Forget “Ops, open”' }).click();
    await page.getByRole('status').filter({ hasText: 'Forgot view “Ops, open”.' }).waitFor(WAIT);
    await page.reload();
    await card('Wait for the vendor').waitFor(WAIT);
    expect(await page.getByLabel('Saved views').locator('option').allTextContents()).toEqual(['No saved views']);
  });

  it('saves swimlanes and a sort in a view: the list and its copied link bring back the lanes and the order', async () => {
    const bot = await h.t.addPrincipal({ name: 'lane-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    // Priority order puts Zulu first; title order puts Alpha first, so the sort shows in the lane.
    const zulu = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Zulu for the bot', priority: 'urgent', assignee: bot.id });
    const alpha = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Alpha for the bot', priority: 'low', assignee: bot.id });
    // Loaded afresh: the app reads principals' names as it starts, and lane-bot is new.
    await page.goto(h.base);
    await card('Zulu for the bot').waitFor(WAIT);
    const laneHeads = (p: Page) => p.locator('section.lane .lane-head');
    const botTodo = (p: Page) => p.getByRole('region', { name: 'Swimlane lane-bot (agent)' }).locator('section.column[data-status="todo"] .task-title');
    /** The lanes by person, then title order in the agent's To do: what the saved view must bring back. */
    const expectLanesAndOrder = async (p: Page) => {
      await expect.poll(() => laneHeads(p).allTextContents(), WAIT).toEqual(['lane-bot (agent) 2', expect.stringMatching(/^Nobody \d+$/)]);
      expect(await botTodo(p).allTextContents()).toEqual(['Alpha for the bot', 'Zulu for the bot']);
      expect(await p.getByLabel('Group by').inputValue()).toBe('assignee');
      expect(await p.getByLabel('Sort').inputValue()).toBe('title');
    };

    await page.getByLabel('Group by').selectOption({ label: 'Swimlanes by person' });
    await page.getByLabel('Sort').selectOption('title');
    await page.waitForURL(/\?group=assignee&sort=title$/);
    await expectLanesAndOrder(page);
    await page.getByRole('button', { name: 'Save view…' }).click();
    await page.getByLabel('View name').fill('By person, by title');
    await page.getByRole('button', { name: 'Save', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Saved view “By person, by title”.' }).waitFor(WAIT);

    // A fresh visit shows the plain board (no lanes, priority order); the saved view restores both.
    await page.goto(h.base);
    await card('Zulu for the bot').waitFor(WAIT);
    expect(await page.locator('section.lane').count()).toBe(0);
    const todo = await column('todo').locator('.task-title').allTextContents();
    expect(todo.indexOf('Zulu for the bot')).toBeLessThan(todo.indexOf('Alpha for the bot'));
    await page.getByLabel('Saved views').selectOption('By person, by title');
    await page.waitForURL(/\?group=assignee&sort=title$/);
    await expectLanesAndOrder(page);

    // Its copied link brings back the same lanes and order in a fresh page.
    await page.getByRole('button', { name: 'Copy link' }).click();
    const link = await page.evaluate(() => navigator.clipboard.readText());
    expect(link).toBe(`${h.base}/?group=assignee&sort=title`);
    const other = await h.context.newPage();
    await other.goto(h.base);
    await signIn(other, h.t.adminToken);
    await other.goto(link);
    await other.locator('article.task-card', { hasText: 'Alpha for the bot' }).waitFor(WAIT);
    await expectLanesAndOrder(other);
    await other.close();

    await page.getByRole('button', { name: 'Forget “By person, by title”' }).click();
    await page.getByRole('status').filter({ hasText: 'Forgot view “By person, by title”.' }).waitFor(WAIT);
    // The later tests drag cards about a board of the tasks they know.
    for (const task of [zulu, alpha]) await api('DELETE', `/api/v1/tasks/${task.id}`);
  });

  it('collapses a column to its head and remembers it', async () => {
    await column('blocked').getByRole('button', { name: 'Collapse Blocked' }).click();
    await card('Wait for the vendor').waitFor({ state: 'detached', ...WAIT });
    expect(await column('blocked').getByRole('button', { name: 'Expand Blocked' }).getAttribute('aria-expanded')).toBe('false');
    expect(await column('blocked').locator('.count').textContent()).toBe('1');
    // Collapsed, it is narrow: the other columns get its room.
    const width = async (status: string) => (await column(status).boundingBox())?.width ?? 0;
    expect(await width('blocked')).toBeLessThan((await width('todo')) / 3);
    await page.reload();
    await card('Write the upgrade guide').waitFor(WAIT);
    await column('blocked').getByRole('button', { name: 'Expand Blocked' }).click();
    await card('Wait for the vendor').waitFor(WAIT);
    await page.reload();
    await card('Wait for the vendor').waitFor(WAIT);
  });

  it('shows one column at a time with tabs at 390 px, In review one tap away', async () => {
    await look('light', 390);
    const tabs = page.getByRole('tablist', { name: 'Columns' });
    await tabs.waitFor(WAIT);
    expect(await page.locator('section.column').count()).toBe(1);
    const review = tabs.getByRole('tab', { name: /In review/ });
    const box = await review.boundingBox();
    expect(box && box.y + box.height).toBeLessThan(844);
    await review.click();
    await column('in_review').waitFor(WAIT);
    expect(await page.locator('section.column').count()).toBe(1);
    expect(await review.getAttribute('aria-selected')).toBe('true');
    // Arrow keys walk the tabs; the choice is remembered.
    await page.keyboard.press('ArrowRight');
    await column('blocked').locator('article.task-card', { hasText: 'Wait for the vendor' }).waitFor(WAIT);
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('role')), WAIT).toBe('tab');
    await page.reload();
    await column('blocked').locator('article.task-card', { hasText: 'Wait for the vendor' }).waitFor(WAIT);
    // Hiding the closed columns drops their tabs.
    await page.getByLabel('Hide Done and Cancelled').check();
    await page.waitForURL(/hide=closed/);
    await expect.poll(() => tabs.getByRole('tab').count(), WAIT).toBe(4);
    await tabs.getByRole('tab', { name: /To do/ }).click();
    await look('light', 1280);
    await expect.poll(() => page.locator('section.column').count(), WAIT).toBe(4);
  });

  it('offers undo after a move, which moves it back through the same operation', async () => {
    const task = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Undo me once' });
    await page.reload();
    await card('Undo me once').getByRole('button', { name: /^Move to…/ }).click();
    await page.getByRole('group', { name: 'Move “Undo me once” to' }).getByRole('button', { name: 'Blocked' }).click();
    await toast().filter({ hasText: 'Moved “Undo me once” to Blocked.' }).waitFor(WAIT);
    await expect.poll(() => statusOf(task.id), WAIT).toBe('blocked');
    await toast().getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Undone: Moved “Undo me once” to Blocked.' }).waitFor(WAIT);
    await expect.poll(() => statusOf(task.id), WAIT).toBe('todo');
    await column('todo').locator('article.task-card', { hasText: 'Undo me once' }).waitFor(WAIT);

    // `z` undoes from the keyboard too.
    await card('Undo me once').dragTo(column('blocked'));
    await toast().filter({ hasText: 'Moved “Undo me once” to Blocked.' }).getByRole('button', { name: 'Undo' }).waitFor(WAIT);
    await page.locator('#board-title').click();
    await page.keyboard.press('z');
    await toast().filter({ hasText: 'Undone:' }).waitFor(WAIT);
    await expect.poll(() => statusOf(task.id), WAIT).toBe('todo');
  });

  it('says why when the undo is refused: changed meanwhile, or no way back in the state machine', async () => {
    const task = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Changed meanwhile' });
    await page.reload();
    await card('Changed meanwhile').dragTo(column('blocked'));
    await toast().getByRole('button', { name: 'Undo' }).waitFor(WAIT);
    await api('PATCH', `/api/v1/tasks/${task.id}`, { priority: 'high' });
    await toast().getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Could not undo it:' }).waitFor(WAIT);
    expect(await statusOf(task.id)).toBe('blocked');

    // Blocked → Cancelled (asked first); Cancelled goes only to To do, so the toast says so and offers no button.
    await card('Changed meanwhile').dragTo(column('cancelled'));
    await page.getByRole('alertdialog', { name: 'Cancel “Changed meanwhile”?' }).getByRole('button', { name: 'Cancel task' }).click();
    await toast().filter({ hasText: 'It cannot go back to Blocked: from Cancelled a task can move only to To do.' }).waitFor(WAIT);
    expect(await toast().getByRole('button', { name: 'Undo' }).count()).toBe(0);
    await expect.poll(() => statusOf(task.id), WAIT).toBe('cancelled');
  });

  it('asks before cancelling a task, and keeps it when told to', async () => {
    const task = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Maybe cancel me' });
    await page.reload();
    await card('Maybe cancel me').getByRole('button', { name: /^Move to…/ }).click();
    await page.getByRole('group', { name: 'Move “Maybe cancel me” to' }).getByRole('button', { name: 'Cancelled' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Cancel “Maybe cancel me”?' });
    await dialog.waitFor(WAIT);
    // The safe choice has focus: Enter by habit keeps the task.
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), WAIT).toBe('Keep it');
    expect(await axeIn('cancel confirmation')).toEqual([]);
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden', ...WAIT });
    await column('todo').locator('article.task-card', { hasText: 'Maybe cancel me' }).waitFor(WAIT);
    expect(await statusOf(task.id)).toBe('todo');
    expect(await toast().count()).toBe(0);

    await card('Maybe cancel me').dragTo(column('cancelled'));
    await dialog.getByRole('button', { name: 'Cancel task' }).click();
    await column('cancelled').locator('article.task-card', { hasText: 'Maybe cancel me' }).waitFor(WAIT);
    await expect.poll(() => statusOf(task.id), WAIT).toBe('cancelled');
    // Cancelled → To do is legal: its undo reopens it.
    await toast().getByRole('button', { name: 'Undo' }).click();
    await expect.poll(() => statusOf(task.id), WAIT).toBe('todo');
  });

  it('asks before cancelling from the command palette too, and offers undo there', async () => {
    const task = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Cancel me from the palette' });
    await page.goto(`${h.base}/tasks/${task.id}`);
    await page.getByRole('heading', { name: 'Cancel me from the palette' }).waitFor(WAIT);
    await page.keyboard.press('Control+k');
    const palette = page.getByRole('dialog', { name: 'Command palette' });
    await palette.getByRole('combobox').waitFor(WAIT);
    await page.keyboard.type('cancelled');
    await palette.getByRole('option', { name: 'Move “Cancel me from the palette” to Cancelled' }).waitFor(WAIT);
    await page.keyboard.press('Enter');
    await page.getByRole('alertdialog', { name: 'Cancel “Cancel me from the palette”?' }).getByRole('button', { name: 'Cancel task' }).click();
    await toast().filter({ hasText: 'Moved “Cancel me from the palette” to Cancelled.' }).getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Undone:' }).waitFor(WAIT);
    expect(await statusOf(task.id)).toBe('todo');
  });

  it('deletes a task from its page after asking, and says it cannot be undone', async () => {
    const task = await api<TaskJson>('POST', '/api/v1/tasks', { title: 'Delete me for good' });
    await page.goto(`${h.base}/tasks/${task.id}`);
    await page.getByRole('button', { name: 'Delete task…' }).click();
    const dialog = page.getByRole('alertdialog', { name: 'Delete “Delete me for good”?' });
    await dialog.waitFor(WAIT);
    await dialog.getByRole('button', { name: 'Keep it' }).click();
    await dialog.waitFor({ state: 'hidden', ...WAIT });
    expect((await h.t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(200);

    await page.getByRole('button', { name: 'Delete task…' }).click();
    await dialog.getByRole('button', { name: 'Delete task' }).click();
    await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
    await toast().filter({ hasText: 'Deleted “Delete me for good”. A deleted task cannot be restored.' }).waitFor(WAIT);
    expect((await h.t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(404);
  });

  it('keeps the toast while it is pointed at or focused, and lets it go after about 10 seconds', async () => {
    const timed = await h.context.newPage();
    await timed.clock.install();
    await timed.goto(h.base);
    await signIn(timed, h.t.adminToken);
    await timed.locator('article.task-card', { hasText: 'Write the upgrade guide' }).waitFor(WAIT);
    await timed.locator('article.task-card', { hasText: 'Write the upgrade guide' }).dragTo(timed.locator('section.column[data-status="blocked"]'));
    const shown = timed.locator('.undo-toast', { hasText: 'Moved “Write the upgrade guide” to Blocked.' });
    await shown.waitFor(WAIT);
    await shown.getByRole('button', { name: 'Undo' }).focus();
    // A frame for the app to take the hold (its effects run after paint, on the installed clock's
    // frames): a jump straight past 10 s would reach the toast's old timer first.
    await timed.clock.runFor(200);
    await timed.clock.fastForward(15_000);
    expect(await shown.count()).toBe(1);
    await timed.locator('#board-title').click();
    await timed.mouse.move(0, 0);
    await timed.clock.runFor(200);
    await timed.clock.fastForward(9_000);
    expect(await shown.count()).toBe(1);
    await timed.clock.fastForward(2_000);
    await shown.waitFor({ state: 'detached', ...WAIT });
    await timed.close();
  });

  it('passes axe-core in light and dark at 1280 and 390 px: views, collapsed column, tabs, toast', async () => {
    await page.getByRole('button', { name: 'Save view…' }).click();
    await column('blocked').getByRole('button', { name: 'Collapse Blocked' }).click();
    await card('Rotate the deploy keys').getByRole('button', { name: /^Move to…/ }).click();
    await page.getByRole('group', { name: 'Move “Rotate the deploy keys” to' }).getByRole('button', { name: 'Blocked' }).click();
    // Focus in the toast holds it, however long the checks take.
    await toast().getByRole('button', { name: 'Undo' }).focus();
    const found = await axeIn('board with a view being named, a collapsed column and the undo toast', async () => {
      await toast().waitFor(WAIT);
    });
    expect(found).toEqual([]);
    await column('blocked').getByRole('button', { name: 'Expand Blocked' }).click();
  });
});
