import { mkdir } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../harness.ts';
import { type BrowserHarness, SHOTS, signIn, startBrowser, WAIT } from './browser.ts';

/** axe-core's browser bundle, added to every document the page loads (an init script is not subject to the app's CSP). */
const AXE = createRequire(import.meta.url).resolve('axe-core');

interface Json {
  id: string;
  lease: { id: string; epoch: number } | null;
}

type Scheme = 'light' | 'dark';
const VIEWS: { scheme: Scheme; width: number }[] = [
  { scheme: 'light', width: 1280 },
  { scheme: 'dark', width: 1280 },
  { scheme: 'light', width: 390 },
  { scheme: 'dark', width: 390 },
];

/** axe-core's violations on the page as it is now, of any impact (minor to critical), one line each (rule, impact, where). */
async function violations(page: Page): Promise<string[]> {
  const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
  return results.violations
    .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(' ')}: ${n.failureSummary?.replaceAll('\n', ' ') ?? v.help}`));
}

/** No page scrolls sideways: its content fits the viewport. */
const scrollsSideways = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth);

/** Every route, in light and dark, at 1280 and 390 px, passes axe-core; error and empty states; the phone layout works. */
describe('accessible and pleasant, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let agent: Principal;
  let taskId = '';

  const api = async <T = Json>(method: string, url: string, body?: unknown, token?: string) => {
    const res = await h.t.request(method, url, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
  const asAgent = <T = Json>(method: string, url: string, body?: unknown) => api<T>(method, url, body, agent.token);
  const show = async (scheme: Scheme, width: number) => {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
  };

  /** The pages to check, with what shows each is ready: set by the test that makes their data. */
  let pages: { name: string; path: string; ready: (p: Page) => Promise<void> }[] = [];
  /** Each page's violations in every view, and any view at 390 px that scrolls sideways. */
  const pageViolations = async (list: typeof pages) => {
    const found: string[] = [];
    for (const { name, path, ready } of list) {
      await page.goto(`${h.base}${path}`);
      await ready(page);
      for (const { scheme, width } of VIEWS) {
        await show(scheme, width);
        found.push(...(await violations(page)).map((v) => `${name}, ${scheme}, ${width} px: ${v}`));
        if (width === 390 && (await scrollsSideways(page))) found.push(`${name}, ${scheme}, ${width} px: the page scrolls sideways`);
      }
      await show('light', 1280);
    }
    return found;
  };

  beforeAll(async () => {
    h = await startBrowser();
    agent = await h.t.addPrincipal({ name: 'docs-bot', scopes: ['tasks:read', 'tasks:write', 'tasks:claim', 'events:read'] });
    page = await h.context.newPage();
    page.setDefaultTimeout(10_000);
    await page.addInitScript({ path: AXE });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('shows empty states on a fresh server, and the sign-in page passes axe-core', async () => {
    await page.goto(h.base);
    await page.locator('#token').waitFor(WAIT);
    for (const { scheme, width } of VIEWS) {
      await show(scheme, width);
      expect(await violations(page), `sign-in, ${scheme}, ${width} px`).toEqual([]);
    }
    await show('light', 1280);
    await signIn(page, h.t.adminToken);
    await page.getByText('No tasks yet').waitFor(WAIT);
    await page.goto(`${h.base}/approvals`);
    await page.getByText('Nothing is waiting for a decision.').waitFor(WAIT);
    await page.getByRole('button', { name: 'History' }).click();
    await page.getByText('No approval has been decided yet.').waitFor(WAIT);
    await page.goto(`${h.base}/dead-letter`);
    await page.getByText('No dead letters').waitFor(WAIT);
    await page.goto(`${h.base}/activity?type=comment.created`);
    await page.getByText('No events match these filters.').waitFor(WAIT);
  });

  // Eighteen pages and states in four looks each: 72 axe-core runs.
  it('every page passes axe-core with no violation of any impact, light and dark, at 1280 and 390 px', { timeout: 240_000 }, async () => {
    const task = await asAgent('POST', '/api/v1/tasks', {
      title: 'Publish the accessibility audit',
      description: 'Check **every** page with axe-core.\n\n- light\n- dark',
      priority: 'high',
      labels: ['a11y', 'web'],
    });
    taskId = task.id;
    const claimed = await asAgent('POST', `/api/v1/tasks/${task.id}/claim`, {});
    await asAgent('POST', `/api/v1/leases/${claimed.lease?.id}/heartbeat`, { note: 'Board and task page done' });
    // The task page's run view shows usage and a log (a scrollable region, which must take focus).
    await asAgent('POST', `/api/v1/leases/${claimed.lease?.id}/usage`, { input_tokens: 900, output_tokens: 120, cost: 0.05 });
    await asAgent('POST', `/api/v1/leases/${claimed.lease?.id}/log`, { lines: ['axe-core: 0 violations on the board'] });
    await api('POST', `/api/v1/tasks/${task.id}/comments`, { body: 'Remember the 390 px layout.' });
    for (const [title, priority] of [
      ['Rotate the signing keys', 'urgent'],
      ['Write the on-call runbook', 'normal'],
      ['Archive the old dashboards', 'low'],
    ] as const) {
      await api('POST', '/api/v1/tasks', { title, priority, labels: ['ops'] });
    }
    const done = await asAgent('POST', '/api/v1/tasks', { title: 'Upgrade Node', priority: 'normal' });
    await api('PATCH', `/api/v1/tasks/${done.id}`, { status: 'cancelled' });
    const dead = await asAgent('POST', '/api/v1/tasks', { title: 'Nightly export', max_attempts: 1 });
    const lease = await asAgent('POST', `/api/v1/tasks/${dead.id}/claim`, {});
    await asAgent('POST', `/api/v1/leases/${lease.lease?.id}/release`, { outcome: 'failed', reason: 'The bucket was read-only.' });
    const doomed = await api('POST', '/api/v1/tasks', { title: 'Drop the legacy endpoints' });
    await asAgent('DELETE', `/api/v1/tasks/${doomed.id}`);
    const denied = await api('POST', '/api/v1/tasks', { title: 'Delete the audit log' });
    const asked = await asAgent<{ approval_id?: string; id?: string }>('DELETE', `/api/v1/tasks/${denied.id}`);
    const approvalId = asked.approval_id ?? asked.id;
    await api('POST', `/api/v1/approvals/${approvalId}/deny`, { reason: 'We keep the audit log.' });
    await api('POST', '/api/v1/schedules', { name: 'Weekly dependency review', cron: '0 9 * * 1', time_zone: 'Europe/Berlin', task: { title: 'Review the dependency updates', labels: ['ops'] } });

    pages = [
      { name: 'board', path: '/', ready: (p) => p.locator('article.task-card', { hasText: 'Rotate the signing keys' }).waitFor(WAIT) },
      { name: 'board in swimlanes by person', path: '/?group=assignee', ready: (p) => p.locator('section.lane article.task-card', { hasText: 'Rotate the signing keys' }).waitFor(WAIT) },
      {
        name: 'task with its run',
        path: `/tasks/${task.id}`,
        ready: async (p) => {
          await p.locator('.timeline .event').first().waitFor(WAIT);
          await p.locator('.run-log li').first().waitFor(WAIT);
        },
      },
      { name: 'inbox', path: '/inbox', ready: (p) => p.locator('.inbox-list > li, p.empty').first().waitFor(WAIT) },
      { name: 'insight', path: '/insight', ready: (p) => p.locator('figure[data-chart="failures"] tbody tr').first().waitFor(WAIT) },
      { name: 'approvals', path: '/approvals', ready: (p) => p.locator('article.approval [data-testid="approval-target"]').waitFor(WAIT) },
      { name: 'agents', path: '/agents', ready: (p) => p.getByRole('link', { name: 'docs-bot' }).waitFor(WAIT) },
      { name: 'agent', path: `/agents/${agent.id}`, ready: (p) => p.getByRole('heading', { name: 'Holds now' }).locator('xpath=..').locator('.empty, .held-list').first().waitFor(WAIT) },
      { name: 'fleet', path: '/fleet', ready: (p) => p.locator('li.fleet-agent[data-agent="docs-bot"]').waitFor(WAIT) },
      { name: 'activity', path: '/activity', ready: (p) => p.locator('.activity-line').first().waitFor(WAIT) },
      { name: 'dead letter', path: '/dead-letter', ready: (p) => p.locator('.dead-letter-task').waitFor(WAIT) },
      { name: 'schedules', path: '/schedules', ready: (p) => p.locator('[data-schedule-id] [data-testid="next-run"] time').waitFor(WAIT) },
    ];
    // The first six here, the rest in the next test: each test stays well inside its timeout on a busy machine.
    expect(await pageViolations(pages.slice(0, 6))).toEqual([]);
  });

  it('every page passes axe-core (continued): principals, the fleet, activity, the dead letter and schedules', { timeout: 240_000 }, async () => {
    expect(pages.length, 'the pages the previous test listed').toBeGreaterThan(6);
    expect(await pageViolations(pages.slice(6))).toEqual([]);
  });

  // The approvals history tab, the new-task dialog, the command palette, the shortcuts, the task editor and the page for an unknown address, too.
  it('every dialog and state passes axe-core, light and dark, at 1280 and 390 px', { timeout: 240_000 }, async () => {
    expect(taskId, 'the task the previous test made').not.toBe('');
    const found: string[] = [];
    const extras: { name: string; open: (p: Page) => Promise<void> }[] = [
      {
        // The server answers only known routes with the app, so an unknown one is reached in the app.
        name: 'missing',
        open: async (p) => {
          await p.goto(h.base);
          await p.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
          await p.evaluate(() => {
            history.pushState(null, '', '/no/such/page');
            dispatchEvent(new PopStateEvent('popstate'));
          });
          await p.getByRole('heading', { name: 'Nothing here' }).waitFor(WAIT);
        },
      },
      {
        name: 'approval history',
        open: async (p) => {
          await p.goto(`${h.base}/approvals`);
          await p.getByRole('button', { name: 'History' }).click();
          await p.locator('li.history-item').first().waitFor(WAIT);
        },
      },
      {
        name: 'new task',
        open: async (p) => {
          await p.goto(h.base);
          await p.getByRole('button', { name: 'New task' }).click();
          await p.getByRole('dialog', { name: 'New task' }).waitFor(WAIT);
        },
      },
      {
        name: 'command palette',
        open: async (p) => {
          await p.goto(`${h.base}/tasks/${taskId}`);
          await p.locator('main h1').first().waitFor(WAIT);
          await p.keyboard.press('Control+k');
          await p.getByRole('dialog', { name: 'Command palette' }).locator('[role=option][aria-selected=true]').waitFor(WAIT);
        },
      },
      {
        name: 'shortcuts',
        open: async (p) => {
          await p.goto(h.base);
          await p.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
          await p.keyboard.press('?');
          await p.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor(WAIT);
        },
      },
      {
        name: 'task editor',
        open: async (p) => {
          await p.goto(`${h.base}/tasks/${taskId}`);
          await p.getByRole('button', { name: 'Edit' }).click();
          await p.getByRole('form', { name: 'Edit task' }).waitFor(WAIT);
        },
      },
    ];
    for (const { name, open } of extras) {
      await open(page);
      for (const { scheme, width } of VIEWS) {
        await show(scheme, width);
        found.push(...(await violations(page)).map((v) => `${name}, ${scheme}, ${width} px: ${v}`));
      }
      await show('light', 1280);
    }
    expect(found).toEqual([]);
  });

  it('shows focus on every interactive element it tabs to', async () => {
    const unfocused: string[] = [];
    for (const path of [`/tasks/${taskId}`, '/approvals', `/agents/${agent.id}`, '/activity', '/insight']) {
      await page.goto(`${h.base}${path}`);
      await page.locator('main h1').first().waitFor(WAIT);
      for (let i = 0; i < 30; i++) {
        await page.keyboard.press('Tab');
        const seen = await page.evaluate(() => {
          const el = document.activeElement;
          if (!el || el === document.body) return null;
          const style = getComputedStyle(el);
          return {
            what: `${el.tagName.toLowerCase()} “${el.textContent?.trim().slice(0, 30) ?? ''}”`,
            visible: el.matches(':focus-visible') && style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2,
          };
        });
        if (seen && !seen.visible) unfocused.push(`${path}: ${seen.what}`);
      }
    }
    expect(unfocused).toEqual([]);
  });

  it('at 390 px a lead reads a task timeline and approves an approval without scrolling sideways', async () => {
    await show('light', 390);
    await page.goto(`${h.base}/tasks/${taskId}`);
    await page.getByText('“Board and task page done”').waitFor(WAIT);
    const timeline = page.locator('.timeline');
    await timeline.scrollIntoViewIfNeeded();
    expect(await timeline.locator('[data-event-type="task.claimed"] .actor-agent').isVisible()).toBe(true);
    const box = await timeline.boundingBox();
    expect(box && box.x >= 0 && box.x + box.width <= 390).toBe(true);
    expect(await scrollsSideways(page)).toBe(false);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: /Approvals/ }).click();
    const card = page.locator('article.approval', { hasText: 'Drop the legacy endpoints' });
    await card.waitFor(WAIT);
    expect(await scrollsSideways(page)).toBe(false);
    const approve = card.getByRole('button', { name: 'Approve' });
    await approve.scrollIntoViewIfNeeded();
    const at = await approve.boundingBox();
    expect(at && at.x >= 0 && at.x + at.width <= 390).toBe(true);
    await approve.click();
    await page.getByText('Approved: it ran').waitFor(WAIT);
    expect(await scrollsSideways(page)).toBe(false);
    await show('light', 1280);
  });

  it('writes the dark board at 1280 and 390 px', async () => {
    await mkdir(SHOTS, { recursive: true });
    for (const width of [1280, 390]) {
      await show('dark', width);
      await page.goto(h.base);
      await page.locator('article.task-card', { hasText: 'Rotate the signing keys' }).waitFor(WAIT);
      await page.screenshot({ path: `${SHOTS}board-dark-${width}.png`, fullPage: true });
    }
    await show('light', 1280);
  });

  it('shows a problem with a retry, not a blank page, when the server cannot be reached, and recovers', async () => {
    await page.goto(`${h.base}/fleet`);
    await page.locator('li.fleet-agent').first().waitFor(WAIT);
    await h.context.setOffline(true);
    // The activity page keeps its filters and shows the problem under them; the board has nothing to show but the problem.
    for (const { path, what, heading } of [
      { path: '/activity', what: 'Activity', heading: 'Activity' },
      { path: '/', what: 'Board', heading: 'This page could not load' },
    ]) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: what, exact: true }).click();
      const alert = page.getByRole('alert').filter({ hasText: 'Baton could not be reached' });
      await alert.waitFor(WAIT);
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
      expect(await alert.textContent()).toContain('Check your connection');
      for (const { scheme, width } of VIEWS) {
        await show(scheme, width);
        expect(await violations(page), `${path}, ${scheme}, ${width} px`).toEqual([]);
      }
      await show('light', 1280);
    }
    await h.context.setOffline(false);
    await page.getByRole('button', { name: 'Try again' }).click();
    await page.locator('article.task-card', { hasText: 'Rotate the signing keys' }).waitFor(WAIT);
    expect(await page.getByRole('alert').count()).toBe(0);
  });

  it('shows the server’s problem with a retry when a page cannot load', async () => {
    await page.goto(`${h.base}/tasks/tsk_00000000000000000000000000`);
    const alert = page.getByRole('alert');
    await alert.waitFor(WAIT);
    expect(await alert.textContent()).toMatch(/not found/i);
    await page.getByRole('button', { name: 'Try again' }).waitFor(WAIT);
    await page.getByRole('link', { name: 'Back to the board' }).waitFor(WAIT);
    expect(await violations(page)).toEqual([]);
  });
});
