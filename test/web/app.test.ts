import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, SHOTS, signIn, startBrowser, WAIT } from './browser.ts';


interface TaskJson {
  id: string;
  version: number;
  lease: { id: string } | null;
}

describe('the web app in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;

  const asAgent = async (method: string, url: string, body?: unknown) => {
    const res = await h.t.request(method, url, { token: agent.token, ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<TaskJson & Record<string, unknown>>();
  };
  const card = (title: string) => page.locator('article.task-card', { hasText: title });
  const nav = (name: string | RegExp) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });
  const column = (status: string) => page.locator(`section.column[data-status="${status}"]`);

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'build-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    page = await h.context.newPage();
  });
  afterAll(async () => {
    await h?.close();
  });

  it('serves the app under a strict CSP, leaves API routes alone, and caches hashed assets for good', async () => {
    const index = await fetch(`${h.base}/tasks/tsk_whatever`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const asset = /\/assets\/[\w-]+\.js/.exec(await index.text())?.[0];
    const assetRes = await fetch(`${h.base}${asset}`);
    expect(assetRes.status).toBe(200);
    expect(assetRes.headers.get('cache-control')).toContain('immutable');
    const api = await fetch(`${h.base}/api/v1/nope`);
    expect(api.status).toBe(404);
    expect(api.headers.get('content-type')).toContain('application/problem+json');
  });

  it('refuses a wrong token with a clear message, then signs in with a good one', async () => {
    await page.goto(h.base);
    await page.fill('#token', 'bat_this-is-not-a-real-token');
    await page.click('button[type=submit]');
    await page.getByText('Token not accepted').waitFor(WAIT);
    expect(await page.getByRole('alert').textContent()).toContain('ask an admin for a new one');

    await signIn(page, h.t.adminToken);
    // The server has the SSE stream, so the app follows it rather than the polling fallback.
    await page.locator('.live-stream').waitFor(WAIT);
    expect(await page.locator('.live-polling').count()).toBe(0);
  });

  it('shows a task an agent creates over the API without a reload', async () => {
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    await asAgent('POST', '/api/v1/tasks', { title: 'Write the release notes', priority: 'high', labels: ['docs', 'release'] });
    await card('Write the release notes').waitFor(WAIT);
    expect(await column('todo').textContent()).toContain('Write the release notes');
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });

  it('explains an illegal move with the hint and offers the legal targets', async () => {
    const task = (await h.t.request('GET', '/api/v1/tasks?limit=1')).json<{ data: TaskJson[] }>().data[0];
    const refused = await h.t.request('PATCH', `/api/v1/tasks/${task?.id}`, { body: { status: 'done' } });
    const hint = refused.json<{ hint: string }>().hint.replaceAll('`', '');
    await card('Write the release notes').getByRole('button', { name: /^Move/ }).click();
    await card('Write the release notes').getByRole('group').getByRole('button', { name: 'Done' }).click();
    const notice = page.getByRole('alert');
    await notice.waitFor(WAIT);
    const text = (await notice.textContent()) ?? '';
    expect(text).toContain('Could not move “Write the release notes” from To do to Done');
    expect(text).toContain(hint);
    expect(text).toContain('From To do it can go to:');
    // The offered legal target works.
    await notice.getByRole('button', { name: 'Blocked' }).click();
    await column('blocked').locator('article.task-card', { hasText: 'Write the release notes' }).waitFor(WAIT);
  });

  it('shows the task page with its lease and a live timeline telling humans and agents apart', async () => {
    const task = await asAgent('POST', '/api/v1/tasks', {
      title: 'Migrate the billing webhooks',
      description: 'Move the payment hooks to Standard Webhooks signatures.\nKeep the old route for a week.',
      priority: 'urgent',
      labels: ['billing'],
    });
    const claimed = await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    const leaseId = (claimed.lease as { id: string }).id;
    await card('Migrate the billing webhooks').getByRole('link').click();
    await page.getByRole('heading', { name: 'Migrate the billing webhooks' }).waitFor(WAIT);
    await page.locator('.timeline [data-event-type="task.claimed"] .actor-agent').waitFor(WAIT);
    // Live: a heartbeat note appears without reloading.
    await asAgent('POST', `/api/v1/leases/${leaseId}/heartbeat`, { note: 'Signatures verified against the provider fixtures' });
    await page.getByText('“Signatures verified against the provider fixtures”').waitFor(WAIT);
    // A human's change shows as a human's.
    await h.t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { labels: ['billing', 'payments'] } });
    await page.locator('.timeline [data-event-type="task.updated"] .actor-human').waitFor(WAIT);
    expect(await page.locator('.timeline [data-event-type="task.created"] .actor-human').count()).toBe(0);
    expect(await page.locator('.task-side').textContent()).toMatch(/Holderagentbuild-bot|build-bot/i);
    expect(await page.locator('.task-side').textContent()).toMatch(/\d+m \d+s left/);
  });

  it('approves a pending deletion and shows its effect', async () => {
    const doomed = await asAgent('POST', '/api/v1/tasks', { title: 'Remove the old staging cluster', labels: ['infra'] });
    await nav('Board').click();
    await card('Remove the old staging cluster').waitFor(WAIT);
    const requested = await h.t.request('DELETE', `/api/v1/tasks/${doomed.id}`, { token: agent.token });
    expect(requested.status).toBe(202);
    await page.getByTestId('approvals-badge').getByText('1').waitFor(WAIT);

    await nav(/Approvals/).click();
    const approval = page.locator('article.approval');
    await approval.waitFor(WAIT);
    expect(await approval.locator('pre.will-run').textContent()).toBe(`DELETE /api/v1/tasks/${doomed.id}`);
    await approval.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: it ran').waitFor(WAIT);
    expect((await h.t.request('GET', `/api/v1/tasks/${doomed.id}`)).status).toBe(404);

    await nav('Board').click();
    await card('Write the release notes').waitFor(WAIT);
    expect(await card('Remove the old staging cluster').count()).toBe(0);
    await page.getByTestId('approvals-badge').waitFor({ state: 'detached', ...WAIT });
  });

  it('creates an agent, shows its new token once, and revokes it', async () => {
    await nav('Agents').click();
    // A human's role is listed beside its kind (the bootstrap admin owns the workspace).
    await page.getByTestId('principal-role').getByText('owner').first().waitFor(WAIT);
    await page.getByRole('button', { name: 'New principal' }).click();
    await page.fill('#principal-name', 'release-runner');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('heading', { name: /release-runner/ }).waitFor(WAIT);

    await page.fill('#machine', 'ci-1');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText('It will not be shown again').waitFor(WAIT);
    const token = await page.getByTestId('new-token').inputValue();
    expect(token).toMatch(/^bat_/);
    await page.getByRole('button', { name: 'Copy', exact: true }).click();
    await page.getByRole('button', { name: 'Copied' }).waitFor(WAIT);
    expect((await h.t.request('GET', '/api/v1/whoami', { token })).status).toBe(200);

    await page.getByRole('button', { name: 'Revoke the token for ci-1' }).click();
    await page.getByRole('button', { name: 'Revoke now' }).click();
    await page.locator('tr', { hasText: 'ci-1' }).getByText('Revoked').waitFor(WAIT);
    expect((await h.t.request('GET', '/api/v1/whoami', { token })).status).toBe(401);

    // The revoked token cannot sign in, and says why.
    const other = await h.context.newPage();
    await other.goto(h.base);
    await other.fill('#token', token);
    await other.click('button[type=submit]');
    await other.getByText('Token not accepted').waitFor(WAIT);
    await other.close();
  });

  it('writes screenshots of the board, a task and the approvals at 1280 and 390 px', async () => {
    await mkdir(SHOTS, { recursive: true });
    const review = await asAgent('POST', '/api/v1/tasks', { title: 'Add retries to the export job', priority: 'normal', labels: ['backend'] });
    const held = await asAgent('POST', `/api/v1/tasks/${review.id}/claim`, {});
    await asAgent('PATCH', `/api/v1/tasks/${review.id}`, { status: 'in_review', lease_epoch: (held.lease as unknown as { epoch: number }).epoch });
    await asAgent('POST', '/api/v1/tasks', { title: 'Rotate the signing keys', priority: 'low', labels: ['security'] });
    const pending = await asAgent('POST', '/api/v1/tasks', { title: 'Drop the legacy v0 endpoints', labels: ['api'] });
    expect((await h.t.request('DELETE', `/api/v1/tasks/${pending.id}`, { token: agent.token })).status).toBe(202);
    const billing = page.locator('article.task-card', { hasText: 'Migrate the billing webhooks' });

    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await nav('Board').click();
      await card('Rotate the signing keys').waitFor(WAIT);
      await page.screenshot({ path: `${SHOTS}board-${width}.png`, fullPage: true });
      // A phone shows one column at a time: the billing task is in progress.
      if (width === 390) await page.getByRole('tab', { name: /In progress/ }).click();
      await billing.getByRole('link').click();
      await page.locator('.timeline .event').first().waitFor(WAIT);
      await page.screenshot({ path: `${SHOTS}task-${width}.png`, fullPage: true });
      await nav(/Approvals/).click();
      await page.locator('article.approval').waitFor(WAIT);
      await page.screenshot({ path: `${SHOTS}approvals-${width}.png`, fullPage: true });
    }
  });
});
