import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, SHOTS, signIn, pick, startBrowser, WAIT } from './browser.ts';


describe('working together in the web app', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;
  let taskId: string;

  const asAgent = async (method: string, url: string, body?: unknown) => {
    const res = await h.t.request(method, url, { token: agent.token, ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<Record<string, unknown>>();
  };

  beforeAll(async () => {
    // Failed attempts as the server's defaults would count them (the test default is no back-off and 100 attempts).
    h = await startBrowser({ config: { maxAttempts: 3, retryBackoffS: [600] } });
    agent = await h.t.addPrincipal({ name: 'review-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    taskId = (await asAgent('POST', '/api/v1/tasks', { title: 'Document the claim loop' })).id as string;
    page = await h.context.newPage();
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
    await page.goto(`${h.base}/tasks/${taskId}`);
    await page.getByRole('heading', { name: 'Document the claim loop' }).waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('posts a comment from the box, and it joins the thread', async () => {
    await page.getByLabel('Add a comment').fill('@review-bot please start with the examples.');
    await page.getByRole('button', { name: 'Post comment' }).click();
    await page.locator('.comment .comment-body', { hasText: 'please start with the examples' }).waitFor(WAIT);
    expect(await page.getByLabel('Add a comment').inputValue()).toBe('');
    // The timeline quotes it too.
    await page.locator('.timeline [data-event-type="comment.created"] .event-note', { hasText: '“@review-bot please start with the examples.”' }).waitFor(WAIT);
    const thread = (await h.t.request('GET', `/api/v1/tasks/${taskId}/comments`)).json<{ data: { body: string; mentions: string[] }[] }>();
    expect(thread.data).toEqual([expect.objectContaining({ body: '@review-bot please start with the examples.', mentions: [agent.id] })]);
  });

  it('assigns the task with the assignee control', async () => {
    await pick(page.getByLabel('Assign to'), 'review-bot');
    await page.getByRole('button', { name: 'Assign', exact: true }).click();
    await page.locator('.assignee-now .actor-agent', { hasText: 'review-bot' }).waitFor(WAIT);
    const task = (await h.t.request('GET', `/api/v1/tasks/${taskId}?view=full`)).json<{ assignee: { id: string } | null }>();
    expect(task.assignee?.id).toBe(agent.id);
  });

  it('shows the hand-in and requests changes with feedback, sending the work back to the agent', async () => {
    const claim = await asAgent('POST', `/api/v1/tasks/${taskId}/claim`, {});
    await asAgent('POST', `/api/v1/tasks/${taskId}/hand_in`, { summary: 'Wrote the guide section.', lease_epoch: (claim.lease as { epoch: number }).epoch });
    await page.locator('.handoff-summary', { hasText: 'Wrote the guide section.' }).waitFor(WAIT);
    expect(await page.getByRole('button', { name: 'Request changes' }).isDisabled()).toBe(true);
    await page.getByLabel('Feedback (required to request changes)').fill('Add a failing-claim example.');
    await page.getByRole('button', { name: 'Request changes' }).click();
    await page.locator('.task-head .status-in_progress').waitFor(WAIT);
    const resumed = (await h.t.request('GET', `/api/v1/tasks/${taskId}?view=full`, { token: agent.token })).json<{
      status: string;
      lease: { holder: { id: string } };
      discussion: { changes_requested: { body: string } };
    }>();
    expect(resumed).toMatchObject({ status: 'in_progress', lease: { holder: { id: agent.id } }, discussion: { changes_requested: { body: 'Add a failing-claim example.' } } });
    await page.locator('.comment .comment-body', { hasText: 'Add a failing-claim example.' }).waitFor(WAIT);
    // In the timeline the review is one entry headed by what it was, whatever it appended first.
    const review = page.locator('.timeline > li[data-event-type="task.changes_requested"]');
    await review.locator('.event-note', { hasText: '“Add a failing-claim example.”' }).waitFor(WAIT);
    expect(await review.locator('.event-what').textContent()).toBe('requested changes');
    expect(await review.locator('.event-also > li').allTextContents()).toEqual(
      expect.arrayContaining(['commented“Add a failing-claim example.”', 'gave the last holder a new lease (epoch 2) to make the changes', 'moved it from In review to In progress (changes requested)']),
    );
  });

  it('shows a dead-lettered task and requeues it with one action', async () => {
    const dead = (await asAgent('POST', '/api/v1/tasks', { title: 'Flaky deploy', max_attempts: 1 })).id as string;
    const claim = await asAgent('POST', `/api/v1/tasks/${dead}/claim`, {});
    await asAgent('POST', `/api/v1/leases/${(claim.lease as { id: string }).id}/release`, { outcome: 'failed', reason: 'The registry timed out.' });
    await page.goto(`${h.base}/tasks/${dead}`);
    await page.locator('.dead-letter').waitFor(WAIT);
    expect(await page.locator('.failures').textContent()).toContain('The registry timed out.');
    await page.getByRole('button', { name: 'Requeue' }).click();
    await page.locator('.task-head .status-todo').waitFor(WAIT);
    const task = (await h.t.request('GET', `/api/v1/tasks/${dead}?view=full`)).json<{ status: string; attempts: number; blocked_reason: string | null }>();
    expect(task).toMatchObject({ status: 'todo', attempts: 0, blocked_reason: null });
  });

  it('shows failed attempts and the back-off on board cards, live', async () => {
    await page.goto(h.base);
    await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
    const failOnce = async (title: string, maxAttempts?: number) => {
      const id = (await asAgent('POST', '/api/v1/tasks', { title, ...(maxAttempts ? { max_attempts: maxAttempts } : {}) })).id as string;
      const claim = await asAgent('POST', `/api/v1/tasks/${id}/claim`, {});
      await asAgent('POST', `/api/v1/leases/${(claim.lease as { id: string }).id}/release`, { outcome: 'failed', reason: 'The runner ran out of disk.' });
      return { id, line: page.locator(`.task-card[data-task-id="${id}"] [data-testid="attempts"]`) };
    };
    // No max_attempts of its own: the server's default (3), from the manifest.
    const retried = await failOnce('Rebuild the search index');
    await retried.line.waitFor(WAIT);
    expect(await retried.line.textContent()).toMatch(/^1 failed attempt of 3 · claimable in (10m 0\ds|9m \d\ds)$/);
    const exhausted = await failOnce('Rotate the signing key', 1);
    await exhausted.line.waitFor(WAIT);
    expect(await exhausted.line.textContent()).toBe('Out of attempts (1 failed)');
    // Out of the dead-letter again, for the next test's empty page.
    expect((await h.t.request('POST', `/api/v1/tasks/${exhausted.id}/requeue`)).status).toBe(200);
  });

  it('lists dead letters on their own page, live, and requeues one from there', async () => {
    await page.goto(`${h.base}/dead-letter`);
    await page.getByText('No dead letters').waitFor(WAIT);
    const dead = (await asAgent('POST', '/api/v1/tasks', { title: 'Nightly export', labels: ['ops'], max_attempts: 1 })).id as string;
    const claim = await asAgent('POST', `/api/v1/tasks/${dead}/claim`, {});
    await asAgent('POST', `/api/v1/leases/${(claim.lease as { id: string }).id}/release`, { outcome: 'failed', reason: 'The bucket was read-only.' });
    // It arrives without a reload: the page follows task.dead_lettered.
    const row = page.locator(`.dead-letter-task[data-task="${dead}"]`);
    await row.waitFor(WAIT);
    expect(await row.textContent()).toContain('The bucket was read-only.');
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 800 });
      await page.screenshot({ path: `${SHOTS}dead-letter-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    await row.getByRole('button', { name: 'Requeue' }).click();
    await page.getByText('No dead letters').waitFor(WAIT);
    const task = (await h.t.request('GET', `/api/v1/tasks/${dead}?view=full`)).json<{ status: string; blocked_reason: string | null }>();
    expect(task).toMatchObject({ status: 'todo', blocked_reason: null });
  });

  it('says when more dead letters wait behind the newest 100 it lists', async () => {
    const fail = async (count: number) => {
      const { claims } = (await asAgent('POST', '/api/v1/tasks/claim', { labels: ['bulk'], limit: count })) as { claims: { lease: { id: string } }[] };
      expect(claims).toHaveLength(count);
      await asAgent('POST', '/api/v1/leases/cycle', { leases: claims.map(({ lease }) => ({ id: lease.id, outcome: 'failed', reason: 'The shard was offline.' })), limit: 0 });
    };
    for (let i = 0; i < 101; i++) await asAgent('POST', '/api/v1/tasks', { title: `Reindex shard ${i}`, labels: ['bulk'], max_attempts: 1 });
    await fail(100);
    await page.goto(`${h.base}/dead-letter`);
    await page.locator('.dead-letter-task').first().waitFor(WAIT);
    expect(await page.getByRole('status').filter({ hasText: 'more wait behind them' }).count()).toBe(0);
    await fail(1);
    await page.reload();
    await page.getByRole('status').filter({ hasText: 'These are the newest 100 dead letters; more wait behind them.' }).waitFor(WAIT);
    expect(await page.locator('.dead-letter-task').count()).toBe(100);
  });
});
