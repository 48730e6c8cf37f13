import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, signIn, startBrowser, WAIT } from './browser.ts';

/** What a team lead hit in the web app (issue 36): one key that moved a task, a lost title, a stuck comment, a filter that saw 100 events, a count that ignored filters, a hidden Revoke, raw Markdown. */
describe('the web app guards a lead’s work, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;

  const call = async <T = Record<string, unknown>>(method: string, url: string, body?: unknown, token?: string) => {
    const res = await h.t.request(method, url, { ...(body === undefined ? {} : { body }), ...(token ? { token } : {}) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
  const asAgent = <T = Record<string, unknown>>(method: string, url: string, body?: unknown) => call<T>(method, url, body, agent.token);
  /** A task an agent claimed and handed in, waiting in review. */
  const inReview = async (title: string, summary = 'Done.') => {
    const id = (await asAgent<{ id: string }>('POST', '/api/v1/tasks', { title })).id;
    const claim = await asAgent<{ lease: { epoch: number } }>('POST', `/api/v1/tasks/${id}/claim`, {});
    await asAgent('POST', `/api/v1/tasks/${id}/hand_in`, { summary, lease_epoch: claim.lease.epoch });
    return id;
  };
  const statusOf = async (id: string) => (await call<{ status: string }>('GET', `/api/v1/tasks/${id}`)).status;

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'ops-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(async () => {
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('moves a task from its page only through the move menu: a key on the closed menu moves nothing, and Done is never the target that takes focus', async () => {
    const id = await inReview('Ship the billing export');
    await page.goto(`${h.base}/tasks/${id}`);
    await page.getByRole('heading', { name: 'Ship the billing export' }).waitFor(WAIT);
    expect(await page.locator('.task-head select').count()).toBe(0);
    const toggle = page.locator('.task-head .move-toggle');
    await toggle.focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    // `m` opens it, as on the board; the first target is not an approval.
    await page.locator('#task-title').click();
    await page.keyboard.press('m');
    const options = page.getByRole('group', { name: 'Move “Ship the billing export” to' });
    await options.waitFor(WAIT);
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent), WAIT).toBe('In progress');
    expect(await options.locator('.move-option').allTextContents()).toEqual(['In progress', 'Done', 'Cancelled', 'To do', 'Blocked']);
    await page.keyboard.press('Escape');
    await expect.poll(() => toggle.getAttribute('aria-expanded'), WAIT).toBe('false');
    expect(await statusOf(id)).toBe('in_review');
    // Chosen explicitly, it moves.
    await toggle.click();
    await options.getByRole('button', { name: 'Done' }).click();
    await page.locator('.task-head .status-done').waitFor(WAIT);
    expect(await statusOf(id)).toBe('done');
  });

  it('opens "New task" with the title focused: a title typed at once is kept, spaces and all, and Ctrl+Enter creates it', async () => {
    await page.goto(h.base);
    await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
    await page.locator('#board-title').click();
    await page.keyboard.press('c');
    // No wait: the keys follow the shortcut at once, as a person types.
    await page.keyboard.type('Rotate the jk keys /now');
    expect(await page.locator('dialog[open]').count()).toBe(1);
    expect(await page.locator('#new-task-title').inputValue()).toBe('Rotate the jk keys /now');
    expect(await page.locator('.task-card-selected').count()).toBe(0);
    await page.keyboard.press('Control+Enter');
    await page.locator('dialog[open]').waitFor({ state: 'detached', ...WAIT });
    await page.locator('article.task-card', { hasText: 'Rotate the jk keys /now' }).waitFor(WAIT);
    const list = await call<{ data: { title: string }[] }>('GET', '/api/v1/tasks?limit=100');
    expect(list.data.filter((t) => t.title === 'Rotate the jk keys /now')).toHaveLength(1);
  });

  it('posts a corrected comment after a refusal, and a retry after a lost answer posts it once', async () => {
    const id = (await asAgent<{ id: string }>('POST', '/api/v1/tasks', { title: 'Renew the certificates' })).id;
    await page.goto(`${h.base}/tasks/${id}`);
    const box = page.getByLabel('Add a comment');
    await box.fill('@nobody please check the expiry dates.');
    await page.getByRole('button', { name: 'Post comment' }).click();
    const refusal = page.locator('.comment-form .notice', { hasText: '@nobody' });
    await refusal.waitFor(WAIT);
    // Corrected, it is a new attempt with a new key: posted, not "Idempotency key reused".
    await box.fill('@ops-bot please check the expiry dates.');
    await page.getByRole('button', { name: 'Post comment' }).click();
    await page.locator('.comment .comment-body', { hasText: 'please check the expiry dates.' }).waitFor(WAIT);
    expect(await page.locator('.comment-form .notice').count()).toBe(0);

    // The server applies the next one but its answer is lost, every time the app tries: the user's retry keeps the key.
    const keys: string[] = [];
    await page.route('**/comments', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      keys.push(route.request().headers()['idempotency-key'] ?? '');
      if (keys.length === 1) await route.fetch();
      return route.abort('connectionreset');
    });
    await box.fill('Renewed for a year.');
    await page.getByRole('button', { name: 'Post comment' }).click();
    await page.locator('.comment-form .notice', { hasText: 'Baton could not be reached' }).waitFor(WAIT);
    await page.unroute('**/comments');
    await page.getByRole('button', { name: 'Post comment' }).click();
    await expect.poll(() => box.inputValue(), WAIT).toBe('');
    const thread = await call<{ data: { body: string }[] }>('GET', `/api/v1/tasks/${id}/comments`);
    expect(thread.data.map((c) => c.body)).toEqual(['@ops-bot please check the expiry dates.', 'Renewed for a year.']);
    expect(new Set(keys).size).toBe(1);
  });

  it('requests changes with corrected feedback after a refusal, as it posts a corrected comment', async () => {
    const id = await inReview('Tune the alert thresholds');
    await page.goto(`${h.base}/tasks/${id}`);
    const feedback = page.getByLabel('Feedback (required to request changes)');
    await feedback.fill('@nobody the thresholds page twice a night.');
    await page.getByRole('button', { name: 'Request changes' }).click();
    await page.locator('.review-form .notice', { hasText: '@nobody' }).waitFor(WAIT);
    await feedback.fill('@ops-bot the thresholds page twice a night.');
    await page.getByRole('button', { name: 'Request changes' }).click();
    await page.locator('.task-head .status-in_progress').waitFor(WAIT);
    expect(await statusOf(id)).toBe('in_progress');
  });

  it("finds a busy agent's events however many newer events others wrote", async () => {
    const quiet = await h.t.addPrincipal({ name: 'quiet-bot', scopes: ['tasks:read', 'tasks:write', 'events:read'] });
    await call('POST', '/api/v1/tasks', { title: 'Calibrate the sensors' }, quiet.token);
    for (let i = 0; i < 110; i++) await asAgent('POST', '/api/v1/tasks', { title: `Noise ${i}` });
    await page.goto(`${h.base}/activity?actor=${quiet.id}`);
    await page.locator('.activity-line', { hasText: 'Calibrate the sensors' }).waitFor(WAIT);
    expect(await page.locator('.activity-line').count()).toBe(1);
  });

  it('counts search matches that pass the other filters, as the cards show', async () => {
    for (const title of ['Clean the gutter pipes', 'Paint the gutter brackets', 'Replace the gutter guards']) await call('POST', '/api/v1/tasks', { title, priority: 'low' });
    await page.goto(`${h.base}/?q=gutter`);
    const count = page.locator('p[role=status]', { hasText: 'for “gutter”' });
    await count.filter({ hasText: '3 matches for “gutter”' }).waitFor(WAIT);
    await page.goto(`${h.base}/?q=gutter&priority=urgent`);
    await count.filter({ hasText: 'No matches for “gutter” with these filters (3 matches without them)' }).waitFor(WAIT);
    expect(await page.locator('article.task-card').count()).toBe(0);
    await page.goto(`${h.base}/?q=gutter&priority=low`);
    await count.filter({ hasText: '3 matches for “gutter”' }).waitFor(WAIT);
    expect(await count.textContent()).not.toContain('without them');
  });

  it('keeps Revoke in view on a principal’s tokens at 1280 and 390 px', async () => {
    await call('POST', `/api/v1/agents/${agent.id}/tokens`, { machine: 'build-server-with-a-long-name-01', expires_in_s: 86_400 });
    // Dates in every column: a token that was used.
    await asAgent('GET', '/api/v1/whoami');
    await page.goto(`${h.base}/agents/${agent.id}`);
    const revoke = page.getByRole('button', { name: 'Revoke the token for build-server-with-a-long-name-01' });
    await revoke.waitFor(WAIT);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      // Scrolled to vertically only: nothing may have to be scrolled sideways to reach it.
      const hit = await revoke.evaluate((button) => {
        window.scrollTo(0, button.getBoundingClientRect().top + window.scrollY - 100);
        const box = button.getBoundingClientRect();
        const wrap = button.closest('.table-wrap');
        return {
          inside: box.left >= 0 && box.right <= document.documentElement.clientWidth,
          own: document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2) === button,
          clipped: wrap ? wrap.scrollWidth > wrap.clientWidth : false,
        };
      });
      expect(hit, `at ${width} px`).toEqual({ inside: true, own: true, clipped: false });
      // Asked to confirm, the row still fits.
      await revoke.click();
      const clipped = await page.getByRole('button', { name: 'Revoke now' }).evaluate((button) => {
        const wrap = button.closest('.table-wrap');
        return wrap ? wrap.scrollWidth > wrap.clientWidth : true;
      });
      expect(clipped, `confirming at ${width} px`).toBe(false);
      await page.getByRole('button', { name: 'Cancel', exact: true }).click();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth), `no sideways scroll at ${width} px`).toBe(true);
    }
  });

  it('renders comments and hand-in summaries as Markdown, and a script, an onerror and a javascript: link in them stay inert', async () => {
    const id = await inReview('Harden the upload form', 'Added **size limits** and `clamd` scanning.\n\n- tests\n- docs');
    const hostile = [
      '**Looks good** — see [the runbook](https://example.com/runbook).',
      '<script>window.pwned = "script"</script>',
      '<img src="x" onerror="window.pwned = \'onerror\'">',
      '[click me](javascript:window.pwned=\'link\')',
    ].join('\n\n');
    await call('POST', `/api/v1/tasks/${id}/comments`, { body: hostile });
    await page.goto(`${h.base}/tasks/${id}`);
    const comment = page.locator('.comment .comment-body').first();
    await comment.locator('strong', { hasText: 'Looks good' }).waitFor(WAIT);
    const summary = page.locator('.handoff-summary');
    await summary.locator('strong', { hasText: 'size limits' }).waitFor(WAIT);
    expect(await summary.locator('code').textContent()).toBe('clamd');
    expect(await summary.locator('li').allTextContents()).toEqual(['tests', 'docs']);
    expect(await comment.locator('script, img, [onerror]').count()).toBe(0);
    // Raw HTML shows as the text it is.
    expect(await comment.textContent()).toContain('<script>window.pwned = "script"</script>');
    const runbook = comment.getByRole('link', { name: 'the runbook' });
    expect(await runbook.getAttribute('href')).toBe('https://example.com/runbook');
    expect(await runbook.getAttribute('rel')).toBe('noopener noreferrer');
    const click = comment.locator('a', { hasText: 'click me' });
    expect(await click.getAttribute('href')).toBeNull();
    await click.click();
    expect(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned)).toBeUndefined();
  });
});
