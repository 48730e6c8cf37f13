import { mkdir } from 'node:fs/promises';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { CRON_SECRET } from '../leases/instances.ts';
import { type BrowserHarness, SHOTS, signIn, startBrowser, WAIT } from './browser.ts';


interface Json {
  id: string;
  version: number;
  lease: { id: string; epoch: number } | null;
}

/** A link of the app's main navigation. */
const navLink = (page: Page, name: string | RegExp) => page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name });

/** The lead watching the fleet: approvals in context, agents at work, the activity feed, all live. */
describe('oversight in Chromium: approvals in context, the fleet, activity', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;

  const api = async <T = Json>(method: string, url: string, body?: unknown, token?: string, status = 300) => {
    const res = await h.t.request(method, url, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
    if (res.status >= status) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
  const asAgent = <T = Json>(method: string, url: string, body?: unknown) => api<T>(method, url, body, agent.token);
  const nav = (name: string | RegExp) => navLink(page, name);
  const approval = (text: string) => page.locator('article.approval', { hasText: text });
  const fleetCard = () => page.locator('li.fleet-agent[data-agent="deploy-bot"]');
  /** An agent and its token made through the API, as an admin does while the app is open. */
  const madeByAdmin = async (name: string, scopes: string[]) => {
    const { id } = await api<{ id: string }>('POST', '/api/v1/agents', { name, kind: 'agent', scopes });
    const { token } = await api<{ token: string }>('POST', `/api/v1/agents/${id}/tokens`, { machine: `${name}-box` });
    return { id, token };
  };

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'deploy-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read', 'webhooks:manage'] });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
    await page.locator('.live-stream').waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('shows each pending approval with what it touches, the change, who asked from where, and a history of decisions', async () => {
    const doomed = await api('POST', '/api/v1/tasks', { title: 'Retire the v1 billing API' });
    // The agent's own webhook (another's would be 404 to it): changing it still waits for a human.
    const asked = await asAgent('POST', '/api/v1/webhooks', { url: 'http://127.0.0.1:9/hooks', event_types: ['task.created'], enabled: false });
    const hook = (await api<{ result: { body: Json } }>('POST', `/api/v1/approvals/${asked.id}/approve`, {})).result.body;
    await nav(/Approvals/).click();
    await page.getByText('Nothing is waiting for a decision.').waitFor(WAIT);

    // Notifications were allowed: record what the app raises instead of showing it.
    await page.evaluate(() => {
      const g = globalThis as unknown as { raised: string[]; Notification: unknown };
      g.raised = [];
      g.Notification = class {
        static permission = 'granted';
        constructor(title: string, options: { body: string }) {
          g.raised.push(`${title}: ${options.body}`);
        }
      };
    });
    // The agent asks while the page is open: the list and the badge follow live.
    await asAgent('DELETE', `/api/v1/tasks/${doomed.id}`);
    await asAgent('PATCH', `/api/v1/webhooks/${hook.id}`, { url: 'http://127.0.0.1:9/hooks-v2', event_types: ['task.created', 'task.status_changed'] });
    await page.getByTestId('approvals-badge').getByText('2').waitFor(WAIT);

    await page.waitForFunction(() => (globalThis as unknown as { raised: string[] }).raised.length === 2);
    expect(await page.evaluate(() => (globalThis as unknown as { raised: string[] }).raised)).toEqual([
      'Baton: approval requested: tasks_delete waits for a decision',
      'Baton: approval requested: webhooks_update waits for a decision',
    ]);

    const deletion = approval('tasks_delete');
    await deletion.getByTestId('approval-target').getByText('Retire the v1 billing API').waitFor(WAIT);
    expect(await deletion.getByTestId('approval-target').textContent()).toContain('To do');
    await deletion.getByTestId('requested').getByText('test-machine').waitFor(WAIT);
    expect(await deletion.getByTestId('requested').textContent()).toContain('deploy-bot');
    expect(await deletion.locator('.approval-expiry').textContent()).toMatch(/^Expires in \d+h \d+m$/);

    const update = approval('webhooks_update');
    const target = update.getByTestId('approval-target');
    await target.locator('code.approval-url', { hasText: 'http://127.0.0.1:9/hooks' }).waitFor(WAIT);
    expect(await target.textContent()).toContain('task.created');
    expect(await target.locator('tr[data-field="url"] .diff-before').textContent()).toBe('http://127.0.0.1:9/hooks');
    expect(await target.locator('tr[data-field="url"] .diff-after').textContent()).toBe('http://127.0.0.1:9/hooks-v2');
    expect(await target.locator('tr[data-field="event_types"] .diff-after').textContent()).toBe('task.created, task.status_changed');

    await mkdir(SHOTS, { recursive: true });
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await page.screenshot({ path: `${SHOTS}approvals-context-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    await update.getByPlaceholder('Reason (optional)').fill('Not during the release freeze');
    await update.getByRole('button', { name: 'Deny' }).click();
    await page.getByText('Denied: it will not run').waitFor(WAIT);
    await deletion.getByRole('button', { name: 'Approve' }).click();
    await page.getByText('Approved: it ran').waitFor(WAIT);
    await page.getByTestId('approvals-badge').waitFor({ state: 'detached', ...WAIT });
    expect((await h.t.request('GET', `/api/v1/tasks/${doomed.id}`)).status).toBe(404);

    await page.getByRole('button', { name: 'History' }).click();
    const denied = page.locator('li.history-item', { hasText: 'webhooks_update' });
    await denied.waitFor(WAIT);
    expect(await denied.textContent()).toContain('Denied');
    expect(await denied.textContent()).toContain('“Not during the release freeze”');
    expect(await denied.locator('.actor-human').count()).toBe(1);
    expect(await denied.locator('.actor-agent').textContent()).toContain('deploy-bot');
    await page.locator('li.history-item', { hasText: 'tasks_delete' }).getByText('Approved and ran').waitFor(WAIT);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await page.screenshot({ path: `${SHOTS}approvals-history-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it('follows an agent loop run over REST on the fleet page: claim, heartbeat with a note, hand in, a failed attempt', async () => {
    const work = await api('POST', '/api/v1/tasks', { title: 'Rebuild the search index', priority: 'high' });
    const flaky = await api('POST', '/api/v1/tasks', { title: 'Compact the audit log' });
    await nav('Fleet').click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor(WAIT);
    await fleetCard().getByText('Holds no lease.').waitFor(WAIT);

    const claimed = await asAgent('POST', `/api/v1/tasks/${work.id}/claim`, {});
    const lease = claimed.lease as { id: string; epoch: number };
    await fleetCard().locator('.fleet-lease').getByRole('link', { name: 'Rebuild the search index' }).waitFor(WAIT);
    expect(await fleetCard().getAttribute('data-state')).toBe('working');
    expect(await fleetCard().locator('.fleet-lease').textContent()).toMatch(/\d+m \d+s left/);
    expect(await fleetCard().locator('.fleet-tokens').textContent()).toContain('test-machine');

    await asAgent('POST', `/api/v1/leases/${lease.id}/heartbeat`, { note: 'Indexed 40% of the documents' });
    await fleetCard().getByText('“Indexed 40% of the documents”').waitFor(WAIT);

    await asAgent('POST', `/api/v1/tasks/${work.id}/hand_in`, { summary: 'Index rebuilt; 1.2 M documents.', lease_epoch: lease.epoch });
    await fleetCard().getByText('Holds no lease.').waitFor(WAIT);
    // Its work waits in review: the agent waits on a human.
    await page.locator('li.fleet-agent[data-agent="deploy-bot"][data-state="waiting"]').waitFor(WAIT);

    const second = await asAgent('POST', `/api/v1/tasks/${flaky.id}/claim`, {});
    await asAgent('POST', `/api/v1/leases/${(second.lease as { id: string }).id}/release`, { outcome: 'failed', reason: 'disk full' });
    // One failure among hand-ins is told, not a state (two in a row would make it stuck).
    await fleetCard().getByTestId('fleet-health').getByText('1 failed attempt in the last hour').waitFor(WAIT);
    expect(await fleetCard().getAttribute('data-state')).toBe('waiting');
    expect(await fleetCard().getByTestId('fleet-stats').textContent()).toContain('Last hour: 1 handed in, 1 failed (50% succeeded)');

    // The whole fleet at once: waiting on a review, working, and one that never showed up.
    const docs = await madeByAdmin('docs-bot', ['tasks:read', 'tasks:write', 'tasks:claim']);
    await madeByAdmin('nightly-bot', ['tasks:read', 'tasks:claim']);
    const guide = await api('POST', '/api/v1/tasks', { title: 'Document the retry policy' });
    const held = await api('POST', `/api/v1/tasks/${guide.id}/claim`, {}, docs.token);
    await api('POST', `/api/v1/leases/${(held.lease as { id: string }).id}/heartbeat`, { note: 'Drafted the back-off table' }, docs.token);
    await page.locator('li.fleet-agent[data-agent="docs-bot"][data-state="working"]').getByText('“Drafted the back-off table”').waitFor(WAIT);
    await page.locator('li.fleet-agent[data-agent="nightly-bot"][data-state="offline"]').waitFor(WAIT);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await page.screenshot({ path: `${SHOTS}fleet-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });

    // One click to its events.
    await fleetCard().getByRole('link', { name: 'Its events' }).click();
    await page.getByRole('heading', { name: 'Activity' }).waitFor(WAIT);
    await page.locator('.activity [data-event-type="task.attempt_failed"]').waitFor(WAIT);
    expect(await page.locator('.activity .actor-human').count()).toBe(0);
    expect(await page.locator('.activity [data-event-type="task.handed_in"]').count()).toBe(1);
    expect(page.url()).toContain(`/activity?actor=${agent.id}`);
  });

  it('shows every event live in the activity feed, filters it, and links each line to its task', async () => {
    await nav('Activity').click();
    await page.waitForURL(/\/activity$/);
    await page.locator('.activity [data-event-type="task.claimed"]').first().waitFor(WAIT);
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));

    const fresh = await api('POST', '/api/v1/tasks', { title: 'Rotate the TLS certificates' });
    const line = page.locator('.activity-line[data-event-type="task.created"]', { hasText: 'Rotate the TLS certificates' });
    await line.waitFor(WAIT);
    expect(await page.locator('.activity-line').first().textContent()).toContain('Rotate the TLS certificates');
    await asAgent('POST', `/api/v1/tasks/${fresh.id}/claim`, {});
    // One line per write: the status change the claim made is part of the claim's line.
    const claimLine = page.locator('.activity-line[data-event-type="task.claimed"]', { hasText: 'Rotate the TLS certificates' });
    await claimLine.getByText('with it: moved it from To do to In progress').waitFor(WAIT);
    expect(await claimLine.locator('.event-meta code').textContent()).toBe('task.claimed · task.status_changed');
    expect(await page.locator('.activity-line[data-event-type="task.status_changed"]', { hasText: 'Rotate the TLS certificates' }).count()).toBe(0);

    // Filters: kind, then type, then task; each is in the address.
    await page.getByLabel('Kind').selectOption('agent');
    await page.waitForURL(/kind=agent/);
    await page.locator('.activity .actor-agent').first().waitFor(WAIT);
    expect(await page.locator('.activity .actor-human').count()).toBe(0);
    await page.getByLabel('Event type').selectOption('task.claimed');
    await page.waitForURL(/type=task.claimed/);
    await page.locator('.activity-line[data-event-type="task.claimed"]', { hasText: 'Compact the audit log' }).waitFor(WAIT);
    // The filtered page replaces the unfiltered one as it arrives: until then other lines may still show.
    await expect.poll(() => page.locator('.activity-line:not([data-event-type="task.claimed"])').count(), WAIT).toBe(0);
    await page.getByLabel('Task id').fill(fresh.id);
    await page.getByLabel('Task id').press('Enter');
    await page.waitForURL(new RegExp(`task=${fresh.id}`));
    await page.locator('.activity-line', { hasText: 'Compact the audit log' }).waitFor({ state: 'detached', ...WAIT });
    await page.locator('.activity-line', { hasText: 'Rotate the TLS certificates' }).waitFor(WAIT);
    expect(await page.locator('.activity-line').count()).toBe(1);
    // Live under filters: a matching event arrives, a non-matching one does not.
    await api('PATCH', `/api/v1/tasks/${fresh.id}`, { labels: ['tls'] });
    const leaseId = (await asAgent<{ data: { id: string }[] }>('GET', `/api/v1/leases?holder=me&state=active&task_id=${fresh.id}`)).data[0]?.id;
    await asAgent('POST', `/api/v1/leases/${leaseId}/release`, {});
    await asAgent('POST', `/api/v1/tasks/${fresh.id}/claim`, {});
    await page.locator('.activity-line').nth(1).waitFor(WAIT);
    expect(await page.locator('.activity-line').count()).toBe(2);
    expect(await page.locator('.activity [data-event-type="task.updated"]').count()).toBe(0);

    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL(/\/activity$/);
    await page.locator('.activity .actor-human').first().waitFor(WAIT);

    // Resumable: the connection drops, events happen meanwhile, and they arrive once it is back, in order, once each.
    h.t.app.server.closeAllConnections();
    await page.locator('.live-connecting').waitFor(WAIT);
    const missed = await api('POST', '/api/v1/tasks', { title: 'Renew the domain names' });
    await api('PATCH', `/api/v1/tasks/${missed.id}`, { priority: 'high' });
    await page.locator('.live-stream').waitFor(WAIT);
    const renewed = page.locator('.activity-line', { hasText: 'Renew the domain names' });
    await renewed.nth(1).waitFor(WAIT);
    expect(await renewed.evaluateAll((lines) => lines.map((l) => l.getAttribute('data-event-type')))).toEqual(['task.updated', 'task.created']);
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      await page.screenshot({ path: `${SHOTS}activity-${width}.png`, fullPage: true });
    }
    await page.setViewportSize({ width: 1280, height: 800 });
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);

    // Every line about a task links to it.
    await page.locator('.activity-line[data-event-type="task.created"]', { hasText: 'Rotate the TLS certificates' }).getByRole('link', { name: 'Rotate the TLS certificates' }).click();
    await page.getByRole('heading', { name: 'Rotate the TLS certificates' }).waitFor(WAIT);
    expect(page.url()).toBe(`${h.base}/tasks/${fresh.id}`);
  });

  it('quotes the first words of a comment, and still names a task once it is deleted', async () => {
    const task = await api('POST', '/api/v1/tasks', { title: 'Archive the 2025 invoices' });
    const body = `Done for Q1 and Q2.\n\n${'The Q3 export needs the new bucket policy first. '.repeat(4)}`;
    await api('POST', `/api/v1/tasks/${task.id}/comments`, { body });
    await api('DELETE', `/api/v1/tasks/${task.id}`);
    // A fresh page: the task can no longer be read, so its title comes from its events.
    await page.goto(`${h.base}/activity`);
    const deleted = page.locator('.activity-line[data-event-type="task.deleted"]', { hasText: 'Archive the 2025 invoices' });
    await deleted.waitFor(WAIT);
    const quote = await page.locator('.activity-line[data-event-type="comment.created"]', { hasText: 'Archive the 2025 invoices' }).locator('.event-note').textContent();
    expect(quote).toMatch(/^“Done for Q1 and Q2\. The Q3 export needs the new bucket policy first\. .*\S…”$/);
    expect(quote?.length).toBeLessThanOrEqual(143);
  });

  it('names a principal made or renamed while the app is open, without a reload', async () => {
    await nav('Activity').click();
    await page.waitForURL(/\/activity$/);
    await page.evaluate(() => ((globalThis as unknown as { notReloaded: boolean }).notReloaded = true));
    const made = await madeByAdmin('triage-bot', ['tasks:read', 'tasks:write']);
    const { token } = made;
    const task = await api('POST', '/api/v1/tasks', { title: 'Sort the support inbox' }, token);
    const created = page.locator('.activity-line[data-event-type="task.created"]', { hasText: 'Sort the support inbox' });
    await created.waitFor(WAIT);
    expect(await created.locator('.actor-name').textContent()).toBe('triage-bot');

    await api('PATCH', `/api/v1/agents/${made.id}`, { name: 'inbox-bot' });
    await api('PATCH', `/api/v1/tasks/${task.id}`, { priority: 'high' }, token);
    await page.locator('.activity-line[data-event-type="task.updated"]', { hasText: 'Sort the support inbox' }).locator('.actor-name', { hasText: 'inbox-bot' }).waitFor(WAIT);
    expect(await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded)).toBe(true);
  });
});

/** On a server of their own: a lease that lapses on the injected clock, and more pending approvals than a page. */
describe('the fleet when a lease expires, and approvals past a page, in Chromium', () => {
  // Real time plus an offset the test moves: the browser's clock and the server's agree until the lease is made to lapse.
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  let h: BrowserHarness;
  let page: Page;

  beforeAll(async () => {
    h = await startBrowser({ config: { cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, clock });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.goto(h.base);
    await signIn(page, h.t.adminToken);
    await navLink(page, 'Fleet').click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor(WAIT);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('tells of one expired lease once the sweeper expires it, the agent holding nothing', async () => {
    const agent = await h.t.addPrincipal({ name: 'night-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] });
    const task = (await h.t.request('POST', '/api/v1/tasks', { body: { title: 'Rotate the backup keys' } })).json<Json>();
    const claim = await h.t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: { ttl_s: 30 } });
    expect(claim.status, claim.body).toBe(200);
    const card = page.locator('li.fleet-agent[data-agent="night-bot"]');
    await card.locator('.fleet-lease').getByRole('link', { name: 'Rotate the backup keys' }).waitFor(WAIT);

    // The lease runs out on the server's clock; one sweep expires it and appends lease.expired.
    offset = Date.parse(claim.json<{ lease: { expires_at: string } }>().lease.expires_at) + 1 - Date.now();
    const swept = await h.t.request('POST', '/cron/keepalive', { token: null, headers: { authorization: `Bearer ${CRON_SECRET}` }, key: null });
    expect(swept.status, swept.body).toBe(200);
    await card.getByTestId('fleet-health').getByText('1 expired lease in the last hour').waitFor(WAIT);
    expect(await card.getAttribute('data-state')).toBe('idle');
    await card.getByText('Holds no lease.').waitFor(WAIT);
  });

  it('says 100+ in the badge and the Pending tab past 100 pending approvals, and that more wait', async () => {
    const agent = await h.t.addPrincipal({ name: 'cleanup-bot', scopes: ['tasks:read', 'tasks:write'] });
    // Made with the app closed: open, it would follow each of the 202 writes live, which other tests show.
    await page.goto('about:blank');
    for (let i = 0; i < 101; i++) {
      const task = (await h.t.request('POST', '/api/v1/tasks', { body: { title: `Stale task ${i}` } })).json<Json>();
      const asked = await h.t.request('DELETE', `/api/v1/tasks/${task.id}`, { token: agent.token });
      expect(asked.status, asked.body).toBe(202);
    }
    await page.goto(h.base);
    await page.getByTestId('approvals-badge').getByText('100+').waitFor(WAIT);
    await navLink(page, /Approvals/).click();
    await page.getByRole('button', { name: 'Pending (100+)' }).waitFor(WAIT);
    await page.getByText('These are the first 100 pending approvals; more wait behind them').waitFor(WAIT);
  });

  it('reloads the fleet with a handful of requests, not a GET per lease and per agent', async () => {
    const agents = await Promise.all(Array.from({ length: 6 }, (_, i) => h.t.addPrincipal({ name: `swarm-${i}`, scopes: ['tasks:read', 'tasks:write', 'tasks:claim'] })));
    const leases: string[] = [];
    for (const [i, agent] of agents.entries()) {
      const task = (await h.t.request('POST', '/api/v1/tasks', { body: { title: `Swarm job ${i}` } })).json<Json>();
      leases.push((await h.t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: agent.token, body: {} })).json<Json>().lease?.id ?? '');
    }
    await navLink(page, 'Fleet').click();
    await page.locator('li.fleet-agent[data-agent="swarm-5"]').getByRole('link', { name: 'Swarm job 5' }).waitFor(WAIT);

    const sent: string[] = [];
    page.on('request', (request) => {
      if (request.url().includes('/api/v1/')) sent.push(new URL(request.url()).pathname);
    });
    await h.t.request('POST', `/api/v1/leases/${leases[0]}/heartbeat`, { token: agents[0]?.token, body: { note: 'Halfway through' } });
    await page.locator('li.fleet-agent[data-agent="swarm-0"]').getByText('“Halfway through”').waitFor(WAIT);
    expect(sent.length, sent.join('\n')).toBeLessThanOrEqual(8);
    expect(sent.filter((path) => /\/tasks\/tsk_|\/tokens$/.test(path))).toEqual([]);
  });
});
