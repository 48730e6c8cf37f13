import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AXE, axeEverywhere } from './axe.ts';
import { apiOf, type BrowserHarness, SHOTS, signIn, startBrowser, WAIT } from './browser.ts';

/**
 * A member who may not list principals (no agents:admin) sees people and agents by name, through
 * directory_list (spec/identity.md, "The directory"): on the board, the task page and its timeline.
 */
describe('names for a member, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let claimed: string;
  const api = apiOf(() => h);

  beforeAll(async () => {
    h = await startBrowser();
    const member = await api<{ id: string }>('POST', '/api/v1/agents', { name: 'Mia Member', kind: 'human', role: 'member' });
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
});
