import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { axeEverywhere } from './axe.ts';
import { adminPage, apiOf, type BrowserHarness, startBrowser, WAIT } from './browser.ts';

interface Json {
  id: string;
  lease: { id: string; epoch: number } | null;
}
interface Ask {
  id: string;
  status: string;
  answer: { text: string; option?: string } | null;
  answered_by: { id: string; kind: string } | null;
}

/** The task page's open asks and reservations (issue 43), live, answered through `asks_answer`, in Chromium. */
describe('a task page with asks and reservations, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;
  let me = '';
  const api = apiOf(() => h);
  const asAgent = <T = Json>(method: string, url: string, body?: unknown) => api<T>(method, url, body, agent.token);

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'deploy-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    me = (await api<{ principal: { id: string } }>('GET', '/api/v1/whoami')).principal.id;
    page = await adminPage(h, { axe: true });
    await page.locator('.live-stream').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('shows an agent’s ask and reservation as they are made, answers the ask with an option, and drops the reservation once released', { timeout: 120_000 }, async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Migrate the staging database' });
    await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    await page.goto(`${h.base}/tasks/${task.id}`);
    const reservations = page.locator('section', { has: page.getByRole('heading', { name: 'Reservations' }) });
    await reservations.getByText('None held for this task.').waitFor(WAIT);
    expect(await page.getByRole('heading', { name: 'Asks' }).count()).toBe(0);

    // The agent asks and reserves while the page is open: both show without a reload.
    const ask = await asAgent<Ask>('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'Run the migration now?', options: [{ label: 'Run it' }, { label: 'Wait' }], to: me, timeout_s: 3600, default: { option: 'Wait' } });
    const reserved = await asAgent('POST', '/api/v1/reservations', { resource: 'staging-db', task_id: task.id, ttl_s: 600 });
    const asks = page.locator('section', { has: page.getByRole('heading', { name: 'Asks' }) });
    const item = asks.locator(`li[data-ask="${ask.id}"]`);
    await item.getByText('Run the migration now?').waitFor(WAIT);
    expect(await item.textContent()).toContain('Asked by Agentdeploy-bot of');
    // How long is left, as the fleet says it (an hour's timeout: 59m and some seconds by now).
    expect(await item.getByTestId('ask-due').textContent()).toMatch(/^Due in (1h 0m|59m \d\ds)$/);
    const row = reservations.locator(`li[data-reservation="${reserved.id}"]`);
    await row.getByText('staging-db').waitFor(WAIT);
    expect(await row.textContent()).toMatch(/staging-db \(exclusive\)Agentdeploy-bot .+ left/);
    expect(await axeEverywhere(page, 'task page with an open ask and a reservation')).toEqual([]);

    // Answered from the page through asks_answer: the ask says so and who answered; the API agrees.
    await item.getByRole('group', { name: 'Answers to “Run the migration now?”' }).getByRole('button', { name: 'Run it' }).click();
    await asks.locator(`li[data-ask="${ask.id}"][data-status="answered"]`).getByTestId('ask-closed').getByText('Answered: “Run it”').waitFor(WAIT);
    expect(await item.getByRole('button', { name: 'Run it' }).count()).toBe(0);
    const answered = await api<Ask>('GET', `/api/v1/asks/${ask.id}`);
    expect(answered).toMatchObject({ status: 'answered', answer: { option: 'Run it' }, answered_by: { id: me, kind: 'human' } });
    expect(await item.getByTestId('ask-closed').locator('.actor').getAttribute('title')).toBe(`Human ${me}`);

    // Released by the agent: the page follows.
    await asAgent('POST', `/api/v1/reservations/${reserved.id}/release`, {});
    await reservations.getByText('None held for this task.').waitFor(WAIT);
  });

  it('says an ask, its answer and an attached artifact in words on the timeline and in the activity feed (was the raw types “ask.created”, “artifact.created”)', { timeout: 60_000 }, async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Drop the legacy table' });
    await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    await api('POST', '/api/v1/artifacts', { content: 'plan', name: 'drop-plan.md', task_id: task.id });
    const ask = await asAgent<Ask>('POST', `/api/v1/tasks/${task.id}/asks`, { question: 'May I drop `legacy_recon`?', to: me, timeout_s: 3600, default: { text: 'no' } });
    await api('POST', `/api/v1/asks/${ask.id}/answer`, { text: 'Yes, **after** the backup' });
    // Quotes read as the text a person sees: the Markdown rendered, its marks gone.

    await page.goto(`${h.base}/tasks/${task.id}`);
    const timeline = page.getByRole('list', { name: 'Event timeline' });
    const asked = timeline.locator(':scope > li[data-event-type="ask.created"]');
    await asked.waitFor(WAIT);
    expect(await asked.locator('.event-what').textContent()).toBe('asked a question');
    expect(await asked.locator('.event-note').textContent()).toBe('“May I drop legacy_recon?”');
    const answered = timeline.locator(':scope > li[data-event-type="ask.answered"]');
    expect(await answered.locator('.event-what').textContent()).toBe('answered a question');
    expect(await answered.locator('.event-note').textContent()).toBe('Answer: “Yes, after the backup”');
    expect(await timeline.locator(':scope > li[data-event-type="artifact.created"] .event-what').textContent()).toBe('attached “drop-plan.md”');
    // The artifact by its file name, and downloaded under it (was its id, both).
    const artifact = page.locator('.artifacts .button-link');
    expect(await artifact.textContent()).toBe('drop-plan.md');
    const [download] = await Promise.all([page.waitForEvent('download', WAIT), artifact.click()]);
    expect(download.suggestedFilename()).toBe('drop-plan.md');

    await page.goto(`${h.base}/activity?task=${task.id}`);
    const line = page.locator('.activity-line[data-event-type="ask.created"]');
    await line.waitFor(WAIT);
    expect(await line.locator('.event-what').textContent()).toBe('asked a question');
    expect(await line.locator('.event-note').textContent()).toBe('“May I drop legacy_recon?”');
  });

  it('keeps an artifact’s id inside its card in the narrow side column (it ran over the card’s padding to its border)', async () => {
    const task = await asAgent('POST', '/api/v1/tasks', { title: 'Attach the diff' });
    await api('POST', '/api/v1/artifacts', { content: 'diff', task_id: task.id });
    await page.goto(`${h.base}/tasks/${task.id}`);
    const link = page.locator('.artifacts .button-link');
    await link.waitFor(WAIT);
    const { right, inner } = await link.evaluate((button) => {
      const card = button.closest('.card') as HTMLElement;
      const box = card.getBoundingClientRect();
      return { right: button.getBoundingClientRect().right, inner: box.right - parseFloat(getComputedStyle(card).paddingRight) };
    });
    expect(right).toBeLessThanOrEqual(inner + 0.5);
  });
});
