import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeEverywhere } from './axe.ts';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';

const CRON_SECRET = 'schedules-page-cron-secret-0123456789';
/** The server's clock runs `ahead` ms ahead of the real one; the test moves it to a schedule's next run. */
let ahead = 0;
const clock = { now: () => new Date(Date.now() + ahead) };

interface Schedule {
  id: string;
  enabled: boolean;
  next_runs: string[];
  last_task_id: string | null;
  task: { title: string; labels?: string[]; max_attempts?: number } | null;
}

/**
 * The Schedules page in Chromium: the empty state, a schedule created through the form (a
 * browser-side check and a server refusal shown at the field with its hint first), listed with its
 * cadence in words and its next run; paused and resumed; the server's clock moved to the next run
 * and one maintenance pass run, so it creates a task the page links as the last run, then skips
 * the run after while that task is open and says why; deleted after asking.
 */
describe('schedules, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  const api = apiOf(() => h);
  const schedules = () => api<{ data: Schedule[] }>('GET', '/api/v1/schedules').then((res) => res.data);
  /** One pass of every maintenance loop at the server's current time (the schedules' among them). */
  const sweep = async () => {
    const res = await h.t.request('POST', '/cron/keepalive', { token: null, key: null, headers: { authorization: `Bearer ${CRON_SECRET}` } });
    expect(res.status, res.body).toBe(200);
  };
  const card = () => page.locator('[data-schedule-id]');

  beforeAll(async () => {
    h = await startBrowser({ config: { cronSecret: CRON_SECRET, sweepIntervalMs: 0 }, clock });
    page = await adminPage(h, { axe: true });
  });
  afterAll(() => h?.close());

  it('says what a schedule is when there is none, and creates one through the form', async () => {
    await page.getByRole('link', { name: 'Schedules' }).click();
    await page.waitForURL('**/schedules');
    await page.getByRole('heading', { name: 'No schedules yet' }).waitFor(WAIT);
    expect(await axeEverywhere(page, 'schedules, empty')).toEqual([]);

    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel('Name').fill('Standup notes');
    await page.getByLabel('Title', { exact: true }).fill('Write the standup notes');
    await page.getByLabel('Labels').fill('standup');
    await page.getByLabel('Attempts').fill('2');
    await page.getByLabel('Cron expression').fill('0 9 * *');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    // Checked in the browser: nothing is sent.
    await page.getByText('Give five fields: minute hour day-of-month month day-of-week.').waitFor(WAIT);
    expect(await schedules()).toEqual([]);

    // Five fields the browser cannot judge: the server's refusal at the field, with its hint.
    await page.getByLabel('Cron expression').fill('0 25 * * 1-5');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await page.locator('#schedule-cron-error').waitFor(WAIT);
    expect(await page.getByLabel('Cron expression').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('.notice-hint').textContent()).toContain("Give five fields: minute hour day-of-month month day-of-week, e.g. '0 9 * * 1-5'.");
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'schedules-new-1280.png'), fullPage: true });

    await page.getByLabel('Common cadences').selectOption({ label: 'Every weekday at 09:00' });
    expect(await page.getByLabel('Cron expression').inputValue()).toBe('0 9 * * 1-5');
    await page.getByText('Runs every weekday at 09:00').waitFor(WAIT);
    await page.getByLabel('Time zone').fill('Europe/Berlin');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    await card().waitFor(WAIT);

    const [made] = await schedules();
    expect(made?.next_runs).toHaveLength(5);
    expect(made?.task).toMatchObject({ title: 'Write the standup notes', labels: ['standup'], max_attempts: 2 });
    expect(await card().getByTestId('cadence').textContent()).toContain('every weekday at 09:00 Europe/Berlin');
    expect(await card().getByTestId('next-run').locator('time').getAttribute('datetime')).toBe(made?.next_runs[0]);
    expect(await card().getByTestId('last-run').textContent()).toBe('Not run yet');
    expect(await card().textContent()).toContain('A task: “Write the standup notes”');
    expect(await card().getByText('Active', { exact: true }).count()).toBe(1);
  });

  it('pauses and resumes it', async () => {
    await card().getByRole('button', { name: 'Pause' }).click();
    await card().getByText('Paused', { exact: true }).waitFor(WAIT);
    expect(await card().getByTestId('next-run').textContent()).toBe('None while paused');
    expect((await schedules())[0]?.enabled).toBe(false);
    await card().getByRole('button', { name: 'Resume' }).click();
    await card().getByText('Active', { exact: true }).waitFor(WAIT);
    expect((await schedules())[0]?.enabled).toBe(true);
    await card().getByTestId('next-run').locator('time').waitFor(WAIT);
  });

  it('shows the task its next run created, linked, and a run skipped while that task is open, with the reason', async () => {
    const [schedule] = await schedules();
    const [first, second] = schedule?.next_runs ?? [];
    ahead = Date.parse(first ?? '') + 30_000 - Date.now();
    await sweep();
    const link = card().getByTestId('last-run').getByRole('link', { name: 'Write the standup notes' });
    await link.waitFor(WAIT);
    const created = (await schedules())[0]?.last_task_id;
    expect(created).toMatch(/^tsk_/);
    expect(await link.getAttribute('href')).toBe(`/tasks/${created}`);
    expect(await card().getByTestId('next-run').locator('time').getAttribute('datetime')).toBe(second);

    ahead = Date.parse(second ?? '') + 30_000 - Date.now();
    await sweep();
    await card().getByText('the task it created last was still open').waitFor(WAIT);
    expect(await axeEverywhere(page, 'schedules')).toEqual([]);

    await link.click();
    await page.waitForURL(`**/tasks/${created}`);
    await page.getByRole('heading', { name: 'Write the standup notes' }).waitFor(WAIT);
    await page.goBack();
    await card().waitFor(WAIT);
  });

  it('makes a template’s tasks from the form, and reads other cadences in words (or shows the expression)', async () => {
    const template = await api<{ id: string }>('POST', '/api/v1/templates', { name: 'Monthly report', parameters: [{ name: 'month' }], tasks: [{ key: 'report', title: 'Report for {{month}}' }] });
    await page.getByRole('button', { name: 'New schedule' }).click();
    await page.getByLabel('Name').fill('Monthly report');
    await page.getByLabel('A template’s tasks').check();
    await page.getByLabel('Template', { exact: true }).selectOption(template.id);
    await page.getByLabel('month').fill('this month');
    await page.getByLabel('Cron expression').fill('0 6 1 * *');
    await page.getByLabel('Time zone').fill('UTC');
    await page.getByRole('button', { name: 'Create schedule' }).click();
    const monthly = card().filter({ hasText: 'Monthly report' });
    await monthly.waitFor(WAIT);
    expect(await monthly.getByTestId('cadence').textContent()).toBe('on the 1st of every month at 06:00 UTC 0 6 1 * *');
    expect(await monthly.textContent()).toContain('The tasks of template “Monthly report”');

    await api('POST', '/api/v1/schedules', { name: 'Quarter-hourly sync', cron: '*/15 * * * *', task: { title: 'Sync' } });
    await api('POST', '/api/v1/schedules', { name: 'First Monday-ish', cron: '0 9 1 * 1', time_zone: 'America/New_York', task: { title: 'Plan' } });
    await card().filter({ hasText: 'First Monday-ish' }).waitFor(WAIT);
    expect(await card().filter({ hasText: 'Quarter-hourly sync' }).getByTestId('cadence').textContent()).toBe('every 15 minutes UTC */15 * * * *');
    // Day of the month or weekday, in cron's reading: no words for that, the expression itself.
    expect(await card().filter({ hasText: 'First Monday-ish' }).getByTestId('cadence').textContent()).toBe('0 9 1 * 1 in America/New_York');

    await page.setViewportSize({ width: 390, height: 844 });
    await page.screenshot({ path: join(SHOTS, 'schedules-390.png'), fullPage: true });
    await page.setViewportSize({ width: 1280, height: 800 });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: join(SHOTS, 'schedules-1280.png'), fullPage: true });

    for (const s of (await schedules()).slice(1)) await api('DELETE', `/api/v1/schedules/${s.id}`);
    await expect.poll(() => card().count(), WAIT).toBe(1);
  });

  it('deletes it after asking; the task it created stays', async () => {
    await card().getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete schedule' }).click();
    await page.getByRole('heading', { name: 'No schedules yet' }).waitFor(WAIT);
    expect(await schedules()).toEqual([]);
    const tasks = await api<{ data: { title: string }[] }>('GET', '/api/v1/tasks?labels=standup');
    expect(tasks.data.map((t) => t.title)).toEqual(['Write the standup notes']);
  });
});
