import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, SHOTS, startBrowser, signIn, WAIT } from './browser.ts';


interface TaskJson {
  id: string;
  version: number;
  title: string;
  description: string;
  labels: string[];
  priority: string;
  blocked_by: string[];
  lease: { id: string; epoch: number } | null;
}

/** The team lead's cockpit: create and edit work, approvals in context, the fleet, activity, the keyboard. */
describe('the web app as a cockpit, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;

  const api = async <T = TaskJson>(method: string, url: string, body?: unknown, token?: string) => {
    const res = await h.t.request(method, url, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
  const card = (title: string) => page.locator('article.task-card', { hasText: title });

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'lint-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('creates a task from the `c` key with Markdown, labels, priority and a blocker found by title', async () => {
    const blocker = await api('POST', '/api/v1/tasks', { title: 'Provision the staging database' });
    await card('Provision the staging database').waitFor(WAIT);
    await page.keyboard.press('c');
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.waitFor(WAIT);
    await dialog.getByLabel('Title').fill('Run the migration dry-run');
    await dialog.getByLabel('Description', { exact: true }).fill('Steps:\n\n- **back up** first\n- see [the runbook](https://example.com/runbook)\n\n<img src=x onerror="alert(1)"><script>alert(2)</script>');
    await dialog.getByRole('button', { name: 'Preview' }).click();
    const preview = dialog.getByTestId('description-preview');
    await preview.locator('strong', { hasText: 'back up' }).waitFor(WAIT);
    // Raw HTML is shown as text, never parsed; links open safely.
    expect(await preview.locator('img, script').count()).toBe(0);
    expect(await preview.textContent()).toContain('<img src=x');
    expect(await preview.getByRole('link', { name: 'the runbook' }).getAttribute('rel')).toBe('noopener noreferrer');
    await dialog.getByRole('button', { name: 'Write' }).click();
    await dialog.getByLabel('Priority').selectOption('high');
    await dialog.getByLabel('Labels').fill('db, release');
    // The server's search finds it as its words are typed, however many tasks the workspace holds.
    await dialog.getByLabel('Blocked by').fill('staging datab');
    await dialog.getByRole('button', { name: /Provision the staging database/ }).click();
    await dialog.getByRole('list', { name: 'Chosen blockers' }).getByText('Provision the staging database').waitFor(WAIT);
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await page.getByRole('status').getByRole('link', { name: 'Run the migration dry-run' }).waitFor(WAIT);
    await card('Run the migration dry-run').waitFor(WAIT);

    const list = await api<{ data: TaskJson[] }>('GET', '/api/v1/tasks?labels=db&view=full');
    const created = list.data.find((t) => t.title === 'Run the migration dry-run');
    expect(created).toMatchObject({ priority: 'high', labels: ['db', 'release'], blocked_by: [blocker.id] });
    expect(created?.description).toContain('- **back up** first');
    // Edited later, the task names the blocker it was given by its title (read by id, not found in a list of the newest tasks).
    await page.goto(`${h.base}/tasks/${created?.id}`);
    await page.getByRole('heading', { name: 'Run the migration dry-run' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit task' });
    await form.getByRole('list', { name: 'Chosen blockers' }).getByText('Provision the staging database').waitFor(WAIT);
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('says in the timeline what an edit changed: labels added and removed, priority by name, a long description behind a disclosure', async () => {
    const task = await api('POST', '/api/v1/tasks', { title: 'Tune the retry policy', labels: ['api'], description: 'Short.' });
    const prompt = `Retry idempotent calls only.\n\n${'Back off exponentially, with jitter. '.repeat(8)}`;
    await api('PATCH', `/api/v1/tasks/${task.id}`, { labels: ['api', 'billing'] });
    await api('PATCH', `/api/v1/tasks/${task.id}`, { labels: ['billing'], priority: 'urgent', description: prompt, title: 'Tune the retry policy (v2)' }, agent.token);
    await page.goto(`${h.base}/tasks/${task.id}`);
    const timeline = page.getByRole('list', { name: 'Event timeline' });
    const summary = timeline.locator('summary', { hasText: 'edited the description' });
    await summary.waitFor(WAIT);
    const lines = await timeline.locator('p.event-change, details.event-change > summary').allTextContents();
    // The first edit's one line, then the second's (in the server's order of fields).
    expect(lines[0]).toBe('labels: added “billing”');
    expect(lines.slice(1).sort()).toEqual(
      ['labels: removed “api”', 'priority: “normal” → “urgent”', 'title: “Tune the retry policy” → “Tune the retry policy (v2)”', `edited the description (6 → ${prompt.length.toLocaleString('en')} characters)`].sort(),
    );
    // The texts themselves only on request, whole.
    const after = timeline.locator('pre[data-side="after"]');
    expect(await after.isVisible()).toBe(false);
    await summary.click();
    expect(await after.textContent()).toBe(prompt);
    expect(await timeline.locator('pre[data-side="before"]').textContent()).toBe('Short.');
  });

  it('shows one timeline entry per write: a claim and a hand-in, each with what followed from it', async () => {
    const task = await api('POST', '/api/v1/tasks', { title: 'Compact the audit log' });
    const claim = await api<{ lease: { epoch: number } }>('POST', `/api/v1/tasks/${task.id}/claim`, {}, agent.token);
    await api('POST', `/api/v1/tasks/${task.id}/hand_in`, { summary: 'Compacted; 40 % smaller.', lease_epoch: claim.lease.epoch }, agent.token);
    await page.goto(`${h.base}/tasks/${task.id}`);
    const timeline = page.getByRole('list', { name: 'Event timeline' });
    const handedIn = timeline.locator(':scope > li[data-event-type="task.handed_in"]');
    await handedIn.waitFor(WAIT);
    expect(await timeline.locator(':scope > li').evaluateAll((entries) => entries.map((li) => li.getAttribute('data-event-type')))).toEqual(['task.created', 'task.claimed', 'task.handed_in']);
    expect(await timeline.locator(':scope > li[data-event-type="task.claimed"] .event-also > li').allTextContents()).toEqual(['moved it from To do to In progress']);
    expect(await handedIn.locator('.event-also > li').allTextContents()).toEqual(['ended the lease by changing the status', 'moved it from In progress to In review']);
    expect(await handedIn.locator('.event-meta code').textContent()).toBe('task.handed_in · lease.released · task.status_changed');
  });

  it('edits a task inline; a conflicting change keeps my text, shows both versions, and saves on retry', async () => {
    const task = await api('POST', '/api/v1/tasks', { title: 'Write the rollback plan', description: 'First draft.' });
    await page.goto(`${h.base}/tasks/${task.id}`);
    await page.getByRole('heading', { name: 'Write the rollback plan' }).waitFor(WAIT);
    await page.getByRole('button', { name: 'Edit' }).click();
    const form = page.getByRole('form', { name: 'Edit task' });
    await form.getByLabel('Description', { exact: true }).fill('My careful plan:\n1. stop writes\n2. restore');
    // Meanwhile an agent changes the description.
    await api('PATCH', `/api/v1/tasks/${task.id}`, { description: 'The agent’s plan.' }, agent.token);
    await form.getByRole('button', { name: 'Save' }).click();
    const conflict = form.getByTestId('conflict');
    await conflict.waitFor(WAIT);
    expect(await form.getByRole('alert').textContent()).toContain('Someone else changed this task while you were editing');
    expect(await conflict.locator('[data-side="theirs"]').textContent()).toBe('The agent’s plan.');
    expect(await conflict.locator('[data-side="mine"]').textContent()).toContain('My careful plan');
    expect(await form.getByLabel('Description', { exact: true }).inputValue()).toContain('My careful plan');
    await form.getByRole('button', { name: 'Save mine over theirs' }).click();
    await page.locator('.markdown ol li', { hasText: 'stop writes' }).waitFor(WAIT);
    const saved = await api('GET', `/api/v1/tasks/${task.id}?view=full`);
    expect(saved.description).toContain('My careful plan');
    expect(saved.version).toBe(3);
  });

  it('shows the task’s runs with holder, machine, times and usage, and the open run’s log live as the agent appends to it', async () => {
    const task = await api('POST', '/api/v1/tasks', { title: 'Rebuild the search index', labels: ['insight-demo'] });
    const budget = await api('POST', '/api/v1/budgets', { name: 'Index rebuild cap', applies_to: 'task', target: task.id, unit: 'cost', limit: 0.5 });
    const lease = (await api('POST', `/api/v1/tasks/${task.id}/claim`, {}, agent.token)).lease;
    await api('POST', `/api/v1/leases/${lease?.id}/usage`, { input_tokens: 1200, output_tokens: 300, cost: 0.42, model: 'sonnet-x', tool_calls: 7 }, agent.token);
    await api('POST', `/api/v1/leases/${lease?.id}/log`, { lines: ['Reading the schema', 'Rebuilding 3 shards'] }, agent.token);
    await page.goto(`${h.base}/tasks/${task.id}`);
    const runs = page.getByTestId('runs');
    const run = runs.locator(`li.run[data-run="${lease?.id}"]`);
    await run.locator('.run-log li', { hasText: 'Rebuilding 3 shards' }).waitFor(WAIT);
    expect(await run.getAttribute('data-outcome')).toBe('running');
    expect(await run.locator('.actor-name').textContent()).toBe('lint-bot');
    expect(await run.getByTestId('run-usage').textContent()).toMatch(/1,200 in \/ 300 out tokens · \$0\.42 · 7 tool calls · sonnet-x/);
    // Usage against the budget it spends from: 84 % of the task's cap.
    const line = runs.locator(`[data-budget="${budget.id}"]`);
    await line.waitFor(WAIT);
    expect(await line.textContent()).toBe('Index rebuild cap (this task, lifetime): $0.42 of $0.50, past 80 %');
    // Live: a line appended and the hand-in show without a reload.
    await api('POST', `/api/v1/leases/${lease?.id}/log`, { lines: ['Shard 2 is slow'], level: 'warn' }, agent.token);
    await run.locator('.run-log li.level-warn', { hasText: 'Shard 2 is slow' }).waitFor(WAIT);
    await api('POST', `/api/v1/tasks/${task.id}/hand_in`, { summary: 'Rebuilt.', lease_epoch: lease?.epoch }, agent.token);
    await runs.locator(`li.run[data-run="${lease?.id}"][data-outcome="ended"]`).waitFor(WAIT);
    expect(await run.locator('.run-log li').allTextContents()).toEqual(['1Reading the schema', '2Rebuilding 3 shards', '3warn: Shard 2 is slow']);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}task-runs.png`, fullPage: true });
    await api('POST', `/api/v1/tasks/${task.id}/review`, { decision: 'approve' });
  });

  it('charts insight over a chosen window, each chart with its numbers as a table, readable at 390 px in dark mode', async () => {
    const failing = await api('POST', '/api/v1/tasks', { title: 'Rotate the CDN keys', labels: ['insight-demo'] });
    const lease = (await api('POST', `/api/v1/tasks/${failing.id}/claim`, {}, agent.token)).lease;
    await api('POST', `/api/v1/leases/${lease?.id}/release`, { outcome: 'failed', reason: 'The vault was sealed.' }, agent.token);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Insight' }).click();
    const tiles = page.getByTestId('insight-tiles');
    await tiles.waitFor(WAIT);
    const chart = (id: string) => page.locator(`figure[data-chart="${id}"]`);
    // The drawing is hidden from screen readers; its table is not.
    expect(await chart('throughput').locator('.chart-drawing').getAttribute('aria-hidden')).toBe('true');
    expect(await chart('throughput').locator('table tbody tr').count()).toBe(30);
    expect(await chart('failures').locator('tbody tr').allInnerTexts()).toEqual([expect.stringMatching(/^unspecified\s+1\s+/)]);
    const agentRow = chart('spend-agent').locator('tbody tr', { hasText: 'lint-bot' });
    // Done, runs ended, failure rate (earlier tests ran the agent too), tokens, tool calls, cost.
    expect(await agentRow.locator('td').allTextContents()).toEqual(['1', expect.stringMatching(/^\d+$/), expect.stringMatching(/%$/), '1,200', '300', '7', '$0.42']);
    expect(await chart('spend-label').locator('tbody tr', { hasText: 'insight-demo' }).locator('td').first().textContent()).toBe('1');
    expect(await tiles.textContent()).toContain('$0.42');
    // Tables are shown to everyone on request; the window is kept in the address.
    expect(await chart('times').locator('.sr-only > table').count()).toBe(1);
    await page.getByLabel('Show the numbers').check();
    expect(await chart('times').locator('.chart-table-wrap > table').isVisible()).toBe(true);
    await page.getByLabel('Window').selectOption('7');
    await page.waitForURL(/\/insight\?days=7$/);
    // The window's figures replace the 30 days' once they arrive: wait for exactly seven rows.
    await expect.poll(() => chart('throughput').locator('table tbody tr').count(), WAIT).toBe(7);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}insight-1280.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth)).toBe(false);
    await page.screenshot({ path: `${SHOTS}insight-dark-390.png`, fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.setViewportSize({ width: 1280, height: 800 });
  });
});
