import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { adminPage, apiOf, type BrowserHarness, SHOTS, pick, startBrowser, WAIT } from './browser.ts';
import { axeEverywhere } from './axe.ts';

interface Json {
  id: string;
  version: number;
  status: string;
  labels: string[];
  assignee?: { id: string } | null;
  lease: { id: string; epoch: number } | null;
}
interface Approval {
  id: string;
  status: string;
  reason: string | null;
}

/** Bulk decisions in Chromium: select with a click, shift-click, `x` or "all matching"; one idempotent request per item; each result shown. */
describe('bulk decisions in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;
  const api = apiOf(() => h);
  const asAgent = <T = Json>(method: string, url: string, body?: unknown) => api<T>(method, url, body, agent.token);
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const tick = (title: string) => page.getByRole('checkbox', { name: `Select ${title}` });
  const bar = () => page.getByRole('region', { name: 'Bulk actions' });
  const report = () => page.getByTestId('bulk-report');
  const toast = () => page.locator('.undo-toast');
  const statusOf = async (id: string | undefined) => (await api<Json>('GET', `/api/v1/tasks/${id}`)).status;
  const handedIn = async (title: string) => {
    const task = await asAgent('POST', '/api/v1/tasks', { title });
    const held = await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    return asAgent('PATCH', `/api/v1/tasks/${task.id}`, { status: 'in_review', lease_epoch: held.lease?.epoch });
  };

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'batch-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    page = await adminPage(h, { axe: true });
    await page.locator('.live-stream').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('labels, assigns and moves cards selected by click, shift-click, x and "select all matching"', { timeout: 120_000 }, async () => {
    const made: Json[] = [];
    for (const title of ['Alpha batch', 'Bravo batch', 'Charlie batch', 'Delta batch']) made.push(await api<Json>('POST', '/api/v1/tasks', { title, priority: 'normal' }));
    await card('Delta batch').waitFor(WAIT);
    const order = await page.locator('article.task-card .task-title').allTextContents();
    const [first, , third] = order;
    await tick(first ?? '').click();
    await tick(third ?? '').click({ modifiers: ['Shift'] });
    await bar().getByText('3 tasks selected').waitFor(WAIT);
    // x on the focused card toggles it.
    await card(order[3] ?? '').locator('.task-title').focus();
    await page.keyboard.press('x');
    await bar().getByText('4 tasks selected').waitFor(WAIT);
    await page.keyboard.press('x');
    await bar().getByText('3 tasks selected').waitFor(WAIT);
    await bar().getByRole('button', { name: 'Select all 4 matching' }).click();
    await bar().getByText('4 tasks selected').waitFor(WAIT);
    expect(await axeEverywhere(page, 'board with a selection')).toEqual([]);
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}bulk-1280.png` });

    await bar().getByRole('textbox', { name: 'Label to add to the selected tasks' }).fill('batch');
    await bar().getByRole('button', { name: 'Add label' }).click();
    await report().getByText('Label batch: 4 done.').waitFor(WAIT);
    for (const task of made) expect((await api<Json>('GET', `/api/v1/tasks/${task.id}`)).labels).toEqual(['batch']);

    await bar().getByRole('button', { name: 'Select all 4 matching' }).waitFor({ state: 'detached' });
    await bar().waitFor({ state: 'detached' });
    for (const title of ['Alpha batch', 'Bravo batch']) await tick(title).click();
    await pick(bar().getByRole('combobox', { name: 'Assign the selected tasks to' }), 'batch-bot');
    await bar().getByRole('button', { name: 'Assign 2' }).click();
    await report().getByText('Assign to batch-bot: 2 done.').waitFor(WAIT);
    expect((await api<Json>('GET', `/api/v1/tasks/${made[0]?.id}?view=full`)).assignee?.id).toBe(agent.id);

    for (const title of ['Charlie batch', 'Delta batch']) await tick(title).click();
    await bar().getByRole('combobox', { name: 'Move the selected tasks to' }).selectOption('cancelled');
    // Cancelling is asked first: kept, nothing is sent; confirmed, both go.
    await bar().getByRole('button', { name: 'Move 2' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Cancel 2 tasks?' });
    await ask.getByRole('button', { name: 'Keep it' }).click();
    await ask.waitFor({ state: 'hidden', ...WAIT });
    expect(await statusOf(made[3]?.id)).toBe('todo');
    expect(await report().getByText('Move to Cancelled').count()).toBe(0);
    await bar().getByRole('button', { name: 'Move 2' }).click();
    await ask.getByRole('button', { name: 'Cancel 2 tasks' }).click();
    await report().getByText('Move to Cancelled: 2 done.').waitFor(WAIT);
    await page.locator('section.column-cancelled article.task-card', { hasText: 'Delta batch' }).waitFor(WAIT);
    expect((await api<Json>('GET', `/api/v1/tasks/${made[3]?.id}`)).status).toBe('cancelled');
  });

  it('undoes a bulk move, assignment and label, each item by its own inverse; one changed meanwhile is refused and named', { timeout: 120_000 }, async () => {
    const made: Json[] = [];
    for (const title of ['Undo one', 'Undo two', 'Undo three']) made.push(await api<Json>('POST', '/api/v1/tasks', { title, labels: ['kept'] }));
    const [one, two, three] = made;
    await page.goto(h.base);
    await card('Undo three').waitFor(WAIT);
    const selectAll = async () => {
      for (const title of ['Undo one', 'Undo two', 'Undo three']) await tick(title).click();
      await bar().getByText('3 tasks selected').waitFor(WAIT);
    };

    await selectAll();
    await bar().getByRole('combobox', { name: 'Move the selected tasks to' }).selectOption('blocked');
    await bar().getByRole('button', { name: 'Move 3' }).click();
    await toast().filter({ hasText: 'Move to Blocked: 3 tasks.' }).getByRole('button', { name: 'Undo' }).waitFor(WAIT);
    // Someone changes one meanwhile: its undo is refused by If-Match, the others go back.
    await api('PATCH', `/api/v1/tasks/${two?.id}`, { priority: 'high' });
    await toast().getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Could not undo it: 2 of 3 undone; not “Undo two”.' }).waitFor(WAIT);
    await report().getByText('Undo Move to Blocked: 2 done, 1 refused.').waitFor(WAIT);
    await report().locator('[data-outcome="refused"]', { hasText: 'Undo two' }).waitFor(WAIT);
    expect(await axeEverywhere(page, 'board with a refused bulk undo')).toEqual([]);
    expect([await statusOf(one?.id), await statusOf(two?.id), await statusOf(three?.id)]).toEqual(['todo', 'blocked', 'todo']);

    await api('PATCH', `/api/v1/tasks/${two?.id}`, { status: 'todo' });
    await page.locator('section.column-todo article.task-card', { hasText: 'Undo two' }).waitFor(WAIT);
    await selectAll();
    await pick(bar().getByRole('combobox', { name: 'Assign the selected tasks to' }), 'batch-bot');
    await bar().getByRole('button', { name: 'Assign 3' }).click();
    await report().getByText('Assign to batch-bot: 3 done.').waitFor(WAIT);
    expect((await api<Json>('GET', `/api/v1/tasks/${one?.id}?view=full`)).assignee?.id).toBe(agent.id);
    // `z` presses Undo.
    await page.locator('#board-title').click();
    await page.keyboard.press('z');
    await toast().filter({ hasText: 'Undone: Assign to batch-bot: 3 tasks.' }).waitFor(WAIT);
    await report().getByText('Undo Assign to batch-bot: 3 done.').waitFor(WAIT);
    for (const task of made) expect((await api<Json>('GET', `/api/v1/tasks/${task.id}?view=full`)).assignee ?? null).toBeNull();

    await selectAll();
    await bar().getByRole('textbox', { name: 'Label to add to the selected tasks' }).fill('temporary');
    await bar().getByRole('button', { name: 'Add label' }).click();
    await report().getByText('Label temporary: 3 done.').waitFor(WAIT);
    expect((await api<Json>('GET', `/api/v1/tasks/${three?.id}`)).labels).toEqual(['kept', 'temporary']);
    await toast().getByRole('button', { name: 'Undo' }).click();
    await toast().filter({ hasText: 'Undone: Label temporary: 3 tasks.' }).waitFor(WAIT);
    for (const task of made) expect((await api<Json>('GET', `/api/v1/tasks/${task.id}`)).labels).toEqual(['kept']);
  });

  it('approves reviews and requests changes with one comment; a card that is not in review is refused and says why', { timeout: 120_000 }, async () => {
    const a = await handedIn('Review one');
    const b = await handedIn('Review two');
    const c = await handedIn('Review three');
    await page.goto(h.base);
    await card('Review three').waitFor(WAIT);
    await tick('Review one').click();
    await bar().getByRole('button', { name: 'Select the 3 in review' }).click();
    await bar().getByText('3 tasks selected').waitFor(WAIT);
    await tick('Review three').click();
    // A todo card in the selection: the server refuses it, the others go through.
    await tick('Alpha batch').click();
    await bar().getByRole('button', { name: 'Approve 3 reviews' }).click();
    await report().getByText('Approve reviews: 2 done, 1 refused.').waitFor(WAIT);
    await report().locator('[data-outcome="refused"]', { hasText: 'Alpha batch' }).getByText('only work in review can be reviewed').waitFor(WAIT);
    expect(await axeEverywhere(page, 'board with a bulk report')).toEqual([]);
    expect((await api<Json>('GET', `/api/v1/tasks/${a.id}`)).status).toBe('done');
    expect((await api<Json>('GET', `/api/v1/tasks/${b.id}`)).status).toBe('done');
    // The refused card stays selected, to try again or drop.
    await bar().getByText('1 task selected').waitFor(WAIT);
    await bar().getByRole('button', { name: 'Clear selection' }).click();

    const d = await handedIn('Review four');
    await card('Review four').waitFor(WAIT);
    await tick('Review three').click();
    await tick('Review four').click();
    await bar().getByRole('textbox', { name: 'Comment for the changes requested' }).fill('Add a test for the empty case.');
    await bar().getByRole('button', { name: 'Request changes' }).click();
    await report().getByText('Request changes: 2 done.').waitFor(WAIT);
    for (const task of [c, d]) expect((await api<Json>('GET', `/api/v1/tasks/${task.id}`)).status).toBe('in_progress');
  });

  it('requeues dead letters all at once', async () => {
    for (const title of ['Export one', 'Export two']) {
      const task = await asAgent('POST', '/api/v1/tasks', { title, max_attempts: 1 });
      const held = await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
      await asAgent('POST', `/api/v1/leases/${held.lease?.id}/release`, { outcome: 'failed', reason: 'The bucket was read-only.' });
    }
    await page.goto(`${h.base}/dead-letter`);
    await page.locator('.dead-letter-task', { hasText: 'Export two' }).waitFor(WAIT);
    await page.locator('.dead-letter-task', { hasText: 'Export one' }).getByRole('link').focus();
    await page.keyboard.press('x');
    await bar().getByRole('button', { name: 'Select all 2 matching' }).click();
    expect(await axeEverywhere(page, 'dead letter with a selection')).toEqual([]);
    await bar().getByRole('button', { name: 'Requeue 2' }).click();
    await report().getByText('Requeue: 2 done.').waitFor(WAIT);
    await page.getByText('No dead letters').waitFor(WAIT);
  });

  it('denies approvals in bulk with one reason; one decided elsewhere meanwhile is refused with the reason why', async () => {
    const ids: string[] = [];
    for (const title of ['Old branch one', 'Old branch two', 'Old branch three']) {
      const task = await asAgent('POST', '/api/v1/tasks', { title });
      const res = await h.t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
      ids.push(res.json<{ id: string }>().id);
    }
    await page.goto(`${h.base}/approvals`);
    await page.locator('article.approval').nth(2).waitFor(WAIT);
    const boxes = page.locator('article.approval .select-box');
    await boxes.nth(0).click();
    await boxes.nth(2).click({ modifiers: ['Shift'] });
    await bar().getByText('3 approvals selected').waitFor(WAIT);
    expect(await axeEverywhere(page, 'approvals with a selection')).toEqual([]);
    // Another lead approves one meanwhile: it leaves the list but stays selected, and is refused with the reason.
    await api('POST', `/api/v1/approvals/${ids[1]}/approve`, {});
    await page.locator(`article.approval[data-approval-id="${ids[1]}"]`).waitFor({ state: 'detached', ...WAIT });
    await bar().getByRole('textbox', { name: 'Reason for every selected approval (optional)' }).fill('We keep the branches a month.');
    await bar().getByRole('button', { name: 'Deny 3' }).click();
    await report().getByText('Deny: 2 done, 1 refused.').waitFor(WAIT);
    await report().locator(`[data-item="${ids[1]}"][data-outcome="refused"]`).waitFor(WAIT);
    const decided = await Promise.all(ids.map((id) => api<Approval>('GET', `/api/v1/approvals/${id}`)));
    expect(decided.map((a) => a.status)).toEqual(['denied', 'approved', 'denied']);
    expect(decided[0]?.reason).toBe('We keep the branches a month.');
  });

  it('approves approvals in bulk, asking first when they delete; x selects on the approvals page', async () => {
    const tasks: Json[] = [];
    const ids: string[] = [];
    for (const title of ['Stale draft one', 'Stale draft two']) {
      const task = await asAgent('POST', '/api/v1/tasks', { title });
      tasks.push(task);
      const res = await h.t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
      ids.push(res.json<{ id: string }>().id);
    }
    await page.goto(`${h.base}/approvals`);
    const first = page.locator(`article.approval[data-approval-id="${ids[0]}"]`);
    await first.getByRole('link', { name: 'Stale draft one' }).focus();
    await page.keyboard.press('x');
    await bar().getByText('1 approval selected').waitFor(WAIT);
    await bar().getByRole('button', { name: 'Select all 2 matching' }).click();
    await bar().getByRole('button', { name: 'Approve 2' }).click();
    const ask = page.getByRole('alertdialog', { name: 'Approve 2 deletes?' });
    expect(await axeEverywhere(page, 'approvals asking before deleting')).toEqual([]);
    await ask.getByRole('button', { name: 'Keep it' }).click();
    await ask.waitFor({ state: 'hidden', ...WAIT });
    for (const id of ids) expect((await api<Approval>('GET', `/api/v1/approvals/${id}`)).status).toBe('pending');
    await bar().getByRole('button', { name: 'Approve 2' }).click();
    await ask.getByRole('button', { name: 'Approve and delete' }).click();
    await report().getByText('Approve: 2 done.').waitFor(WAIT);
    for (const id of ids) expect((await api<Approval>('GET', `/api/v1/approvals/${id}`)).status).toBe('approved');
    for (const task of tasks) expect((await h.t.request('GET', `/api/v1/tasks/${task.id}`)).status).toBe(404);
  });
});
