import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { adminPage, apiOf, type BrowserHarness, pick, startBrowser, WAIT } from './browser.ts';

interface Json {
  id: string;
}

/** Who is on what: holders and assignees on cards, the person filter, swimlanes, a principal's holdings. */
describe('who is on what, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let bot: Principal;
  let me: string;

  const call = apiOf(() => h);
  const api = <T = Json>(method: string, url: string, body?: unknown, token?: string) => call<T>(method, url, body, token);
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const titles = async () => (await page.locator('article.task-card .task-title').allTextContents()).sort();

  beforeAll(async () => {
    h = await startBrowser();
    bot = await h.t.addPrincipal({ name: 'ops-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    me = (await api<{ principal: { id: string } }>('GET', '/api/v1/whoami')).principal.id;
    await api('POST', '/api/v1/tasks', { title: 'Queued for ops', assignee: bot.id, labels: ['infra'] });
    const held = await api('POST', '/api/v1/tasks', { title: 'Patch the kernel', labels: ['infra'] });
    await api('POST', `/api/v1/tasks/${held.id}/claim`, {}, bot.token);
    await api('POST', '/api/v1/tasks', { title: 'Nobody owns this', labels: ['docs'] });
    await api('POST', '/api/v1/tasks', { title: 'Mine to review', assignee: me });
    page = await adminPage(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('shows the holder (with kind and how long) and the assignee on cards', async () => {
    const holder = card('Patch the kernel').getByTestId('holder');
    await holder.getByText(/^for \d+s$/).waitFor(WAIT);
    expect(await holder.textContent()).toMatch(/Held by\s*Agent\s*ops-bot\s*for \d+s/);
    expect(await card('Queued for ops').getByTestId('assignee').textContent()).toMatch(/Assigned to\s*Agent\s*ops-bot/);
    expect(await card('Nobody owns this').getByTestId('assignee').count()).toBe(0);
  });

  it('filters by person (an agent, mine, nobody) and keeps the filter in the address', async () => {
    await pick(page.getByLabel('Filter by person'), 'ops-bot');
    await page.waitForURL(`**/?who=${bot.id}`);
    await card('Nobody owns this').waitFor({ state: 'detached', ...WAIT });
    expect(await titles()).toEqual(['Patch the kernel', 'Queued for ops']);
    await page.reload();
    await card('Patch the kernel').waitFor(WAIT);
    expect(await titles()).toEqual(['Patch the kernel', 'Queued for ops']);
    expect(await page.getByLabel('Filter by person').inputValue()).toBe('ops-bot');

    await pick(page.getByLabel('Filter by person'), 'Mine');
    await page.waitForURL('**/?who=me');
    await card('Patch the kernel').waitFor({ state: 'detached', ...WAIT });
    expect(await titles()).toEqual(['Mine to review']);

    await pick(page.getByLabel('Filter by person'), "Nobody's (unassigned)");
    await page.waitForURL('**/?who=none');
    await card('Nobody owns this').waitFor(WAIT);
    expect(await titles()).toEqual(['Nobody owns this']);
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.waitForURL(`${h.base}/`);
  });

  it('groups the board into swimlanes by person or by label', async () => {
    await page.getByLabel('Group by').selectOption({ label: 'Swimlanes by person' });
    await page.waitForURL('**/?group=assignee');
    const lanes = page.locator('section.lane');
    await lanes.first().waitFor(WAIT);
    expect(await lanes.locator('.lane-head').allTextContents()).toEqual([expect.stringMatching(/^admin.* \(human\) ?1$/), 'ops-bot (agent) 2', 'Nobody 1']);
    const ops = page.getByRole('region', { name: 'Swimlane ops-bot (agent)' });
    expect((await ops.locator('.task-title').allTextContents()).sort()).toEqual(['Patch the kernel', 'Queued for ops']);
    expect(await ops.getByRole('region', { name: 'ops-bot (agent), In progress: 1 tasks' }).count()).toBe(1);

    await page.getByLabel('Group by').selectOption({ label: 'Swimlanes by label' });
    await page.waitForURL('**/?group=label');
    await page.getByRole('region', { name: 'Swimlane docs' }).waitFor(WAIT);
    expect(await lanes.locator('.lane-head').allTextContents()).toEqual(['docs 1', 'infra 2', 'No label 1']);
    // j walks lane by lane.
    await page.keyboard.press('j');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Nobody owns this');
  });

  it("lists what a principal holds now and what is assigned to it on its page", async () => {
    await page.goto(`${h.base}/agents/${bot.id}`);
    const held = page.getByRole('list', { name: 'Tasks it holds' });
    await held.getByRole('link', { name: 'Patch the kernel' }).waitFor(WAIT);
    expect(await page.getByRole('list', { name: 'Tasks assigned to it' }).getByRole('link').allTextContents()).toEqual(['Queued for ops']);
    // An agent has scopes, not a role.
    expect(await page.getByRole('region', { name: 'Role' }).count()).toBe(0);
  });

  it("gives a person a role on their page, whose scopes replace theirs (single sign-on maps a role only once)", async () => {
    const person = await h.t.addPrincipal({ kind: 'human', name: 'Pat Member', scopes: ['tasks:read', 'tasks:write'] });
    await api('POST', `/api/v1/agents/${person.id}/role`, { role: 'member' });
    await page.goto(`${h.base}/agents/${person.id}`);
    const role = page.getByRole('region', { name: 'Role' });
    await role.getByText('Now member.').waitFor(WAIT);
    await role.getByLabel(/Give the role/).selectOption('admin');
    await role.getByRole('button', { name: 'Set role' }).click();
    await role.getByText('Now admin.').waitFor(WAIT);
    const after = await api<{ role: string; scopes: string[] }>('GET', `/api/v1/agents/${person.id}`);
    expect(after.role).toBe('admin');
    expect(after.scopes).toContain('agents:admin');
    expect(await page.getByRole('checkbox', { name: 'agents:admin' }).isChecked()).toBe(true);
  });

  it('lists what a principal holds however many newer tasks are in progress (it read the newest 300 and missed an older one)', async () => {
    const swarm = await h.t.addPrincipal({ name: 'swarm-bot', scopes: ['tasks:read', 'tasks:claim'] });
    for (let n = 0; n < 300; n++) await api('POST', '/api/v1/tasks', { title: `Swarm chore ${n}`, labels: ['swarm'] });
    for (let n = 0; n < 3; n++) await api('POST', '/api/v1/tasks/claim', { labels: ['swarm'], limit: 100 }, swarm.token);
    await page.goto(`${h.base}/agents/${bot.id}`);
    const held = page.getByRole('list', { name: 'Tasks it holds' });
    await held.getByRole('link', { name: 'Patch the kernel' }).waitFor(WAIT);
    expect(await held.getByRole('link').allTextContents()).toEqual(['Patch the kernel']);
    await page.goto(`${h.base}/agents/${swarm.id}`);
    await expect.poll(() => page.getByRole('list', { name: 'Tasks it holds' }).getByRole('link').count(), WAIT).toBe(300);
  });
});

