import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, startBrowser, signIn, WAIT } from './browser.ts';


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
    await dialog.getByLabel('Blocked by').fill('staging data');
    await dialog.getByRole('button', { name: /Provision the staging database/ }).click();
    await dialog.getByRole('list', { name: 'Chosen blockers' }).getByText('Provision the staging database').waitFor(WAIT);
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await page.getByRole('status').getByRole('link', { name: 'Run the migration dry-run' }).waitFor(WAIT);
    await card('Run the migration dry-run').waitFor(WAIT);

    const list = await api<{ data: TaskJson[] }>('GET', '/api/v1/tasks?labels=db&view=full');
    const created = list.data.find((t) => t.title === 'Run the migration dry-run');
    expect(created).toMatchObject({ priority: 'high', labels: ['db', 'release'], blocked_by: [blocker.id] });
    expect(created?.description).toContain('- **back up** first');
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
});
