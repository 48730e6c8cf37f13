import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AXE, axeEverywhere } from './axe.ts';
import { adminPage, apiOf, type BrowserHarness, pick, SHOTS, signIn, startBrowser, WAIT } from './browser.ts';

/**
 * A member who may not list principals (no agents:admin) sees people and agents by name, through
 * directory_list (spec/identity.md, "The directory"): on the board, the task page and its timeline.
 */
describe('names for a member, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let claimed: string;
  /** Principals older than the newest hundred: a page is not given their names at sign-in. */
  let member: { id: string };
  let zeta: { id: string };
  const api = apiOf(() => h);

  beforeAll(async () => {
    h = await startBrowser();
    member = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'Mia Member', kind: 'human', role: 'member' });
    const { token } = await api<{ token: string }>('POST', `/api/v1/agents/${member.id}/tokens`, { machine: 'browser' });
    const lead = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'Alice Lead', kind: 'human', role: 'admin' });
    const bot = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'build-bot-7', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const botToken = (await api<{ token: string }>('POST', `/api/v1/agents/${bot.id}/tokens`, { machine: 'ci' })).token;
    await api('POST', '/api/v1/tasks', { title: 'Write the launch notes', assignee: lead.id });
    claimed = (await api<{ id: string }>('POST', '/api/v1/tasks', { title: 'Build the release', assignee: bot.id })).id;
    await api('POST', `/api/v1/tasks/${claimed}/claim`, {}, botToken);
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.addInitScript({ path: AXE });
    await page.goto(h.base);
    await signIn(page, token);
  });
  afterAll(() => h?.close());

  /** No id shown anywhere on the page, axe clean, and a screenshot at 390 and 1280 px. */
  async function namesEverywhere(view: string): Promise<void> {
    expect(await page.locator('main').textContent()).not.toMatch(/agt_/);
    expect(await axeEverywhere(page, `${view}, member`)).toEqual([]);
    for (const [width, height, suffix] of [[390, 844, '-390'], [1280, 800, '']] as const) {
      await page.setViewportSize({ width, height });
      await page.screenshot({ path: join(SHOTS, `directory-${view}${suffix}.png`), fullPage: true });
    }
  }

  it('names the assignee and the holder on the board', async () => {
    const notes = page.locator('[data-task-id]', { hasText: 'Write the launch notes' });
    await notes.getByTestId('assignee').getByText('Alice Lead').waitFor(WAIT);
    const release = page.locator('[data-task-id]', { hasText: 'Build the release' });
    await release.getByText('build-bot-7').waitFor(WAIT);
    await namesEverywhere('board');
  });

  it('names the holder and the timeline actors on the task page', async () => {
    await page.goto(`${h.base}/tasks/${claimed}`);
    await page.getByRole('heading', { name: 'Build the release' }).waitFor(WAIT);
    const timeline = page.locator('.event');
    await timeline.filter({ hasText: 'build-bot-7' }).first().waitFor(WAIT);
    await namesEverywhere('task');
  });

  it('finds a principal the page was not given (past the newest hundred) by the start of its name, and assigns the task to it', async () => {
    zeta = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'Zeta Runner', scopes: ['tasks:read', 'tasks:claim'] });
    for (let n = 0; n < 100; n++) await api('POST', '/api/v1/agents', { name: `filler-${n}`, scopes: ['tasks:read'] });
    const notes = (await api<{ data: { id: string }[] }>('GET', '/api/v1/tasks?q=launch')).data[0]?.id ?? '';
    await page.goto(`${h.base}/tasks/${notes}`);
    await page.getByRole('heading', { name: 'Write the launch notes' }).waitFor(WAIT);
    const picker = page.getByRole('combobox', { name: 'Assign to' });
    await picker.click();
    await picker.fill('zeta r');
    const option = page.getByRole('option', { name: 'Zeta Runner', exact: true });
    await option.waitFor(WAIT);
    // Beside the name, whether it is an agent or a human: the option's description (its name stays the name).
    expect(await option.evaluate((el) => document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent)).toBe('agent');
    expect(await picker.getAttribute('aria-expanded')).toBe('true');
    expect(await axeEverywhere(page, 'assignee picker open, member')).toEqual([]);
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.screenshot({ path: join(SHOTS, 'directory-picker.png') });
    await page.keyboard.press('Enter');
    expect(await picker.inputValue()).toBe('Zeta Runner');
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    await page.locator('.assignee-now').getByText('Zeta Runner').waitFor(WAIT);
    expect((await api<{ assignee: { id: string } | null }>('GET', `/api/v1/tasks/${notes}?view=full`)).assignee?.id).toBe(zeta.id);
    // A name no one has: the list says so, and leaving the field keeps the assignee.
    await picker.fill('nobody-by-this-name');
    await page.getByRole('status').filter({ hasText: 'No one’s name begins “nobody-by-this-name”.' }).waitFor(WAIT);
    await page.keyboard.press('Escape');
    expect(await picker.inputValue()).toBe('Zeta Runner');
    // Twelve matches at most, and the arrow keys keep the highlighted one in sight in the list's box.
    await picker.fill('filler');
    const options = page.getByRole('listbox').getByRole('option');
    await expect.poll(() => options.count(), WAIT).toBe(12);
    for (let i = 0; i < 11; i++) await page.keyboard.press('ArrowDown');
    const active = page.locator(`[id="${await picker.getAttribute('aria-activedescendant')}"]`);
    expect(await active.getAttribute('aria-selected')).toBe('true');
    const [box, shown] = await Promise.all([page.getByRole('listbox').boundingBox(), active.boundingBox()]);
    expect(shown && box && shown.y >= box.y - 1 && shown.y + shown.height <= box.y + box.height + 1).toBe(true);
    await page.keyboard.press('Escape');
  });

  it('never offers a disabled principal, even one whose name the page shows', async () => {
    const retired = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'Retired Runner', scopes: ['tasks:read'] });
    const task = await api<{ id: string }>('POST', '/api/v1/tasks', { title: 'Left by a retired agent', assignee: retired.id });
    await api('PATCH', `/api/v1/agents/${retired.id}`, { disabled: true });
    await page.goto(`${h.base}/tasks/${task.id}`);
    await page.locator('.assignee-now').getByText('Retired Runner').waitFor(WAIT);
    const picker = page.getByRole('combobox', { name: 'Assign to' });
    await picker.click();
    await picker.fill('retired');
    await page.getByRole('status').filter({ hasText: 'No one’s name begins “retired”.' }).waitFor(WAIT);
    expect(await page.getByRole('option', { name: 'Retired Runner' }).count()).toBe(0);
    await page.keyboard.press('Escape');
  });

  it('shows an admin the principals a hundred at a time, and finds any of them by name', async () => {
    const admin = await adminPage(h, { axe: true });
    await admin.goto(`${h.base}/agents`);
    const rows = admin.locator('table.table tbody tr');
    await rows.nth(99).waitFor(WAIT);
    expect(await rows.count()).toBe(100);
    // Every principal: more than a hundred (the fillers above), fewer than two hundred.
    const first = await api<{ data: unknown[]; next_cursor: string }>('GET', '/api/v1/agents?limit=100');
    const second = await api<{ data: unknown[]; has_more: boolean }>('GET', `/api/v1/agents?limit=100&cursor=${encodeURIComponent(first.next_cursor)}`);
    expect(second.has_more).toBe(false);
    const total = first.data.length + second.data.length;
    await admin.getByRole('button', { name: 'Show 100 more' }).click();
    await rows.nth(total - 1).waitFor(WAIT);
    expect(await rows.count()).toBe(total);
    expect(await admin.getByRole('button', { name: 'Show 100 more' }).count()).toBe(0);
    expect(await axeEverywhere(admin, 'agents, admin')).toEqual([]);
    for (const [width, height, suffix] of [[390, 844, '-390'], [1280, 800, '']] as const) {
      await admin.setViewportSize({ width, height });
      await admin.evaluate(() => window.scrollTo(0, 0));
      await admin.screenshot({ path: join(SHOTS, `agents${suffix}.png`) });
    }
    await pick(admin.getByRole('combobox', { name: 'Find by name' }), 'Zeta Runner');
    await admin.waitForURL(/\/agents\/agt_/);
    await admin.getByRole('heading', { name: 'Zeta Runner' }).waitFor(WAIT);
    // The board filtered by such a principal's id (one no card names: it holds and is assigned nothing) names it in the filter.
    await admin.goto(`${h.base}/?who=${member.id}`);
    await admin.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
    await expect.poll(() => admin.getByRole('combobox', { name: 'Filter by person' }).inputValue(), WAIT).toBe('Mia Member');
    await admin.close();
  });
});
