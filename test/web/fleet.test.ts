import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';

interface Json {
  id: string;
  lease: { id: string; epoch: number; expires_at: string } | null;
}

const SCOPES = ['tasks:read', 'tasks:write', 'tasks:claim'] as const;

/** The fleet's states by spec/web.md's rules: working, waiting on a human, stuck, idle, offline. */
describe('an accurate fleet, in Chromium', () => {
  // Real time plus an offset a test moves: heartbeats can be made to look old to the browser.
  let offset = 0;
  const clock = { now: () => new Date(Date.now() + offset) };
  let h: BrowserHarness;
  let page: Page;

  const call = apiOf(() => h);
  const api = <T = Json>(method: string, url: string, body?: unknown, token?: string) => call<T>(method, url, body, token);
  const card = (name: string) => page.locator(`li.fleet-agent[data-agent="${name}"]`);
  /** The agent claims a new task and releases it as failed: one failed attempt. */
  const failOnce = async (agent: Principal, title: string) => {
    const task = await api('POST', '/api/v1/tasks', { title });
    const claimed = await api('POST', `/api/v1/tasks/${task.id}/claim`, {}, agent.token);
    await api('POST', `/api/v1/leases/${claimed.lease?.id}/release`, { outcome: 'failed', reason: 'tests failed' }, agent.token);
  };
  const claim = async (agent: Principal, title: string, body: Record<string, unknown> = {}) => {
    const task = await api('POST', '/api/v1/tasks', { title });
    const { lease } = await api('POST', `/api/v1/tasks/${task.id}/claim`, body, agent.token);
    return { id: task.id, lease };
  };

  beforeAll(async () => {
    h = await startBrowser({ clock });
    page = await adminPage(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('shows heartbeating agents as working, though each failed an attempt in the last hour (was "4 struggling, 0 working")', async () => {
    const agents = await Promise.all([0, 1, 2, 3].map((i) => h.t.addPrincipal({ name: `crew-${i}`, scopes: [...SCOPES] })));
    for (const [i, agent] of agents.entries()) {
      await failOnce(agent, `Flaky job ${i}`);
      const held = await claim(agent, `Steady job ${i}`);
      await api('POST', `/api/v1/leases/${held.lease?.id}/heartbeat`, { note: `Step ${i} of 4` }, agent.token);
    }
    await page.goto(`${h.base}/fleet`);
    for (const i of [0, 1, 2, 3]) await card(`crew-${i}`).getByText(`“Step ${i} of 4”`).waitFor(WAIT);
    for (const i of [0, 1, 2, 3]) expect(await card(`crew-${i}`).getAttribute('data-state')).toBe('working');
    expect(await page.getByLabel('Agents by state').textContent()).toContain('4 working');
    // The failure is still told, as information.
    expect(await card('crew-0').getByTestId('fleet-health').textContent()).toContain('1 failed attempt in the last hour');
  });

  it('shows an agent whose work waits in review as waiting on a human, then idle once it is approved', async () => {
    const agent = await h.t.addPrincipal({ name: 'review-bot', scopes: [...SCOPES] });
    const held = await claim(agent, 'Write the upgrade notes');
    await api('POST', `/api/v1/tasks/${held.id}/hand_in`, { summary: 'Notes written.', lease_epoch: held.lease?.epoch }, agent.token);
    await page.goto(`${h.base}/fleet`);
    const waiting = card('review-bot');
    await waiting.getByRole('link', { name: 'Write the upgrade notes' }).waitFor(WAIT);
    expect(await waiting.getAttribute('data-state')).toBe('waiting');
    expect(await waiting.getByTestId('fleet-state').textContent()).toBe('Waiting on a human');
    expect(await waiting.getByTestId('fleet-stats').textContent()).toContain('Last hour: 1 handed in, 0 failed (100% succeeded)');

    await api('POST', `/api/v1/tasks/${held.id}/review`, { decision: 'approve' });
    await page.locator('li.fleet-agent[data-agent="review-bot"][data-state="idle"]').waitFor(WAIT);
  });

  it('shows an agent stuck after two failed attempts in a row, and working again after a hand-in', async () => {
    const agent = await h.t.addPrincipal({ name: 'flaky-bot', scopes: [...SCOPES] });
    await failOnce(agent, 'Migrate the cache 1');
    await failOnce(agent, 'Migrate the cache 2');
    const held = await claim(agent, 'Migrate the cache 3');
    await page.goto(`${h.base}/fleet`);
    const stuck = page.locator('li.fleet-agent[data-agent="flaky-bot"][data-state="stuck"]');
    await stuck.waitFor(WAIT);
    expect(await stuck.getByTestId('fleet-health').textContent()).toContain('its last 2 attempts failed');
    expect(await stuck.getByTestId('fleet-stats').textContent()).toContain('Last hour: 0 handed in, 2 failed (0% succeeded)');
    // Stuck agents come first.
    expect(await page.locator('li.fleet-agent').first().getAttribute('data-agent')).toBe('flaky-bot');

    await api('POST', `/api/v1/tasks/${held.id}/hand_in`, { summary: 'Cache migrated.', lease_epoch: held.lease?.epoch }, agent.token);
    await page.locator('li.fleet-agent[data-agent="flaky-bot"][data-state="waiting"]').waitFor(WAIT);
    expect(await card('flaky-bot').getByTestId('fleet-stats').textContent()).toContain('1 handed in, 2 failed (33% succeeded)');
  });

  it('shows an agent stuck when a lease went two heartbeat intervals without a heartbeat', async () => {
    const agent = await h.t.addPrincipal({ name: 'silent-bot', scopes: [...SCOPES] });
    // Claimed 250 s ago on the server's clock with a 300 s lease: heartbeats are due every 100 s, and none came.
    offset = -250_000;
    await claim(agent, 'Reindex the archive', { ttl_s: 300 });
    offset = 0;
    await page.goto(`${h.base}/fleet`);
    const stuck = page.locator('li.fleet-agent[data-agent="silent-bot"][data-state="stuck"]');
    await stuck.getByRole('link', { name: 'Reindex the archive' }).waitFor(WAIT);
    expect(await stuck.getByTestId('fleet-health').textContent()).toContain('1 lease near lapse without a heartbeat');
  });

  it('shows an agent that asked a human as waiting on a human though it holds a lease (was "working"), and working once answered', async () => {
    const agent = await h.t.addPrincipal({ name: 'asking-bot', scopes: [...SCOPES] });
    const me = (await api<{ principal: { id: string } }>('GET', '/api/v1/whoami')).principal.id;
    const held = await claim(agent, 'Rotate the API keys');
    await api('POST', `/api/v1/leases/${held.lease?.id}/heartbeat`, { note: 'Keys staged' }, agent.token);
    // Half an hour: the card says "due in 29m 59s" or "30m 00s" (an hour would show as "1h 0m" when rounded up on a fast machine).
    const ask = await api('POST', `/api/v1/tasks/${held.id}/asks`, { question: 'Rotate them in production?', options: [{ label: 'Yes' }, { label: 'No' }], to: me, timeout_s: 1800, default: { option: 'No' } }, agent.token);
    await page.goto(`${h.base}/fleet`);
    const waiting = page.locator('li.fleet-agent[data-agent="asking-bot"][data-state="waiting"]');
    await waiting.getByRole('link', { name: '“Rotate them in production?”' }).waitFor(WAIT);
    expect(await waiting.getByTestId('fleet-state').textContent()).toBe('Waiting on a human');
    expect(await waiting.locator(`li[data-ask="${ask.id}"]`).textContent()).toMatch(/^Asked “Rotate them in production\?” of .+, due in \d+m \d\ds$/);
    // Its lease is still shown with the heartbeat's note.
    await waiting.getByText('“Keys staged”').waitFor(WAIT);

    await api('POST', `/api/v1/asks/${ask.id}/answer`, { option: 'Yes' });
    await page.locator('li.fleet-agent[data-agent="asking-bot"][data-state="working"]').waitFor(WAIT);
    expect(await card('asking-bot').locator(`li[data-ask="${ask.id}"]`).count()).toBe(0);
  });

  it('shows the agents of one state alone when its count is pressed (kept in the address), and finds agents by name', async () => {
    await page.goto(`${h.base}/fleet`);
    await card('crew-0').waitFor(WAIT);
    const counts = page.getByLabel('Agents by state');
    const all = await page.locator('li.fleet-agent').count();
    const working = counts.getByRole('button', { name: /working$/ });
    await working.click();
    await page.waitForURL('**/fleet?state=working');
    expect(await working.getAttribute('aria-pressed')).toBe('true');
    const states = await page.locator('li.fleet-agent').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-state')));
    expect(states.length).toBe(Number((await working.textContent())?.split(' ')[0]));
    expect(new Set(states)).toEqual(new Set(['working']));
    // Reload keeps it; pressing it again shows every agent.
    await page.reload();
    await card('crew-0').waitFor(WAIT);
    expect(await page.locator('li.fleet-agent:not([data-state="working"])').count()).toBe(0);
    await counts.getByRole('button', { name: /working$/ }).click();
    await page.waitForURL(`${h.base}/fleet`);
    await expect.poll(() => page.locator('li.fleet-agent').count(), WAIT).toBe(all);
    await page.getByRole('searchbox', { name: 'Find agents by name' }).fill('CREW-2');
    await expect.poll(() => page.locator('li.fleet-agent').evaluateAll((cards) => cards.map((c) => c.getAttribute('data-agent'))), WAIT).toEqual(['crew-2']);
    await page.getByRole('searchbox', { name: 'Find agents by name' }).fill('no-such-agent');
    await page.getByText('No agent has that name.').waitFor(WAIT);
    await page.getByRole('button', { name: 'Show every agent' }).click();
    await expect.poll(() => page.locator('li.fleet-agent').count(), WAIT).toBe(all);
    // The whole fleet was read: nothing says otherwise.
    expect(await page.getByTestId('fleet-partial').count()).toBe(0);
  });

  it('applies heartbeats where they are shown, without a request: a busy fleet spends none of the viewer’s rate budget on them', async () => {
    const agent = await h.t.addPrincipal({ name: 'beating-bot', scopes: [...SCOPES] });
    const held = await claim(agent, 'Crawl the docs');
    await page.goto(`${h.base}/fleet`);
    await card('beating-bot').getByRole('link', { name: 'Crawl the docs' }).waitFor(WAIT);
    const requests: string[] = [];
    const count = (request: { url: () => string }) => {
      if (request.url().includes('/api/') && !request.url().includes('/events/stream')) requests.push(request.url());
    };
    page.on('request', count);
    for (const n of [1, 2, 3, 4, 5, 6, 7, 8]) await api('POST', `/api/v1/leases/${held.lease?.id}/heartbeat`, { note: `Page ${n} of 8` }, agent.token);
    await card('beating-bot').getByText('“Page 8 of 8”').waitFor(WAIT);
    expect(requests).toEqual([]);
    // A claim is not a heartbeat: the page reads the fleet again.
    await claim(agent, 'Crawl the blog');
    await card('beating-bot').getByRole('link', { name: 'Crawl the blog' }).waitFor(WAIT);
    expect(requests.length).toBeGreaterThan(0);
    page.off('request', count);
  });

  it('shows each agent’s time and cost today, live as its runs end', async () => {
    const agent = await h.t.addPrincipal({ name: 'costly-bot', scopes: [...SCOPES] });
    // Claimed five minutes ago on the server's clock: the run lasts five minutes when handed in now.
    offset = -300_000;
    const held = await claim(agent, 'Summarise the incident', { ttl_s: 900 });
    offset = 0;
    await api('POST', `/api/v1/leases/${held.lease?.id}/usage`, { input_tokens: 12_000, output_tokens: 3_000, cost: 0.42, currency: 'USD' }, agent.token);
    await page.goto(`${h.base}/fleet`);
    const usage = card('costly-bot').getByTestId('fleet-usage');
    // What was reported is told apart from the runs that ended: this run is still open.
    await usage.getByText('Today (UTC): no runs ended · reported: cost $0.42, 15,000 tokens').waitFor(WAIT);
    expect(await card('review-bot').getByTestId('fleet-usage').textContent()).toMatch(/^Today \(UTC\): 1 run ended, \d+s in all$/);

    await api('POST', `/api/v1/tasks/${held.id}/hand_in`, { summary: 'Summary written.', lease_epoch: held.lease?.epoch }, agent.token);
    await usage.getByText(/1 run ended/).waitFor(WAIT);
    expect(await usage.textContent()).toMatch(/^Today \(UTC\): 1 run ended, 5m 0\ds in all · reported: cost \$0\.42, 15,000 tokens$/);
  });

  it('reads the tokens of the agents that hold no lease only: a working agent’s lease names its machine', async () => {
    const worker = await h.t.addPrincipal({ name: 'leased-bot', scopes: [...SCOPES] });
    await claim(worker, 'Hold the line');
    const asked: string[] = [];
    const count = (request: { url: () => string }) => {
      const agent = /\/api\/v1\/agents\/(agt_\w+)\/tokens/.exec(request.url())?.[1];
      if (agent) asked.push(agent);
    };
    page.on('request', count);
    await page.goto(`${h.base}/fleet`);
    await card('leased-bot').getByRole('link', { name: 'Hold the line' }).waitFor(WAIT);
    await card('costly-bot').locator('.fleet-tokens').waitFor(WAIT);
    page.off('request', count);
    // The idle agents' were read (their state needs when a token was last used); the holder's were not.
    expect(asked.length).toBeGreaterThan(0);
    expect(asked).not.toContain(worker.id);
    expect(await card('leased-bot').locator('.fleet-tokens').count()).toBe(0);
  });

  it('says when a fleet larger than it reads is shown in part, rather than counting only what it read as the fleet', async () => {
    for (let n = 0; n < 500; n++) await api('POST', '/api/v1/agents', { name: `swarm-${String(n).padStart(3, '0')}`, scopes: ['tasks:read'] });
    await page.goto(`${h.base}/fleet`);
    const partial = page.getByTestId('fleet-partial');
    await partial.waitFor(WAIT);
    expect(await partial.textContent()).toBe('This page shows part of the fleet: it read the newest 500 agents, of more. The counts are of what it read. An agent’s own page shows all it holds.');
    // The newest 500 are agents: the people the workspace also has do not take their places.
    expect(await page.locator('li.fleet-agent').count()).toBe(500);
    await page.screenshot({ path: join(SHOTS, 'fleet-partial.png') });
  });
});
