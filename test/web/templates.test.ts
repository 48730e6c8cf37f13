import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiOf, type BrowserHarness, signIn, startBrowser, WAIT } from './browser.ts';

/** axe-core's browser bundle, added to every document the page loads. */
const AXE = createRequire(import.meta.url).resolve('axe-core');

const RELEASE = {
  name: 'Release',
  description: 'Our release checklist',
  parameters: [
    { name: 'version', description: 'The version to release, e.g. 1.4.0' },
    { name: 'area', type: 'enum', values: ['web', 'api'], default: 'web' },
    { name: 'days', type: 'number', default: 2 },
  ],
  tasks: [
    { key: 'release', title: 'Release {{version}}', labels: ['release'] },
    { key: 'notes', title: 'Notes for {{version}} ({{area}})', parent: 'release' },
    { key: 'approve', title: 'Approve {{version}}', parent: 'release', approval: true },
    { key: 'ship', title: 'Ship {{version}}', parent: 'release', blocked_by: ['notes', 'approve'], not_before_s: 3600 },
  ],
};

/** Serious and critical axe-core violations on the page as it is now. */
async function violations(page: Page): Promise<string[]> {
  const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}`));
}

/** Templates in the web app: pick one, fill the form its parameters make, preview the graph, create it. */
describe('templates, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  const api = apiOf(() => h);

  beforeAll(async () => {
    h = await startBrowser();
    await api('POST', '/api/v1/templates', RELEASE);
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.addInitScript({ path: AXE });
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('makes a form from the parameters, previews the graph without writing, then creates every task', async () => {
    await page.getByRole('link', { name: 'Templates' }).click();
    await page.waitForURL('**/templates');
    await page.getByLabel('Template', { exact: true }).selectOption({ label: 'Release (4 tasks)' });
    // One field per declared parameter: text, a select for the enum, the number's default shown.
    await page.getByLabel(/^version/).waitFor(WAIT);
    expect(await page.getByLabel(/^area/).evaluate((el) => el.tagName)).toBe('SELECT');
    expect(await page.getByLabel(/^days/).getAttribute('placeholder')).toBe('2');

    // Required and empty: the server names the parameter.
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByText('/params/version').waitFor(WAIT);

    await page.getByLabel(/^version/).fill('1.4.0');
    await page.getByLabel(/^area/).selectOption('api');
    await page.getByRole('button', { name: 'Preview' }).click();
    await page.getByRole('heading', { name: 'Preview' }).waitFor(WAIT);
    const ship = page.locator('[data-template-key="ship"]');
    expect(await ship.textContent()).toMatch(/Ship 1\.4\.0.*blocked by Notes for 1\.4\.0 \(api\), Approve 1\.4\.0/);
    expect(await page.locator('[data-template-key="release"] [data-template-key="notes"]').count()).toBe(1);
    expect(await page.locator('[data-template-key="approve"]').textContent()).toContain('Approval gate');
    const tasks = await api<{ data: unknown[] }>('GET', '/api/v1/tasks?status=todo,in_review&limit=100');
    expect(tasks.data).toHaveLength(0);

    for (const [scheme, width] of [['light', 1280], ['dark', 1280], ['light', 390], ['dark', 390]] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      expect(await violations(page), `${scheme} at ${width} px`).toEqual([]);
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    await page.getByRole('button', { name: 'Create 4 tasks' }).click();
    await page.getByRole('heading', { name: 'Created 4 tasks' }).waitFor(WAIT);
    const made = await api<{ data: { title: string; status: string }[] }>('GET', '/api/v1/tasks?status=todo,in_review&limit=100');
    expect(made.data.map((t) => t.title).sort()).toEqual(['Approve 1.4.0', 'Notes for 1.4.0 (api)', 'Release 1.4.0', 'Ship 1.4.0']);
    await page.getByRole('link', { name: 'Ship 1.4.0' }).click();
    await page.waitForURL('**/tasks/tsk_*');
  });

  it('makes a template’s tasks from quick create: the template field swaps the fields for its parameters, Ctrl+Enter creates', async () => {
    await page.goto(h.base);
    await page.locator('#board-title').waitFor(WAIT);
    await page.keyboard.press('c');
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Template', { exact: true }).selectOption({ label: 'Release (4 tasks)' });
    expect(await dialog.locator('#new-task-title').count()).toBe(0);
    await dialog.getByLabel(/^version/).fill('2.0.0');
    expect(await violations(page)).toEqual([]);
    await page.keyboard.press('Control+Enter');
    await dialog.waitFor({ state: 'hidden', ...WAIT });
    await page.getByRole('link', { name: 'Release 2.0.0' }).first().waitFor(WAIT);
    const made = await api<{ data: { title: string }[] }>('GET', '/api/v1/tasks?limit=100');
    expect(made.data.map((t) => t.title).filter((t) => t.includes('2.0.0'))).toEqual(expect.arrayContaining(['Release 2.0.0', 'Notes for 2.0.0 (web)', 'Ship 2.0.0']));
  });

  it('shows the command to save a template as code when there is none (it showed the Markdown backticks)', async () => {
    const listed = await api<{ data: { id: string }[] }>('GET', '/api/v1/templates');
    for (const t of listed.data) await api('DELETE', `/api/v1/templates/${t.id}`);
    await page.goto(`${h.base}/templates`);
    const empty = page.getByText(/^No templates yet/);
    await empty.waitFor(WAIT);
    expect(await empty.locator('code').allTextContents()).toEqual(['baton templates create file.yaml', 'POST /api/v1/templates']);
    expect(await empty.textContent()).not.toContain('`');
  });
});
