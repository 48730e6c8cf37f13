import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Receiver, startReceiver } from '../realtime/receiver.ts';
import { axeEverywhere } from './axe.ts';
import { adminPage, apiOf, type BrowserHarness, SHOTS, startBrowser, WAIT } from './browser.ts';

/**
 * Webhooks in the web app, against a local receiver that verifies each delivery
 * (standardwebhooks): the secret shown once verifies what arrives, the delivery log shows it, a
 * rotated secret replaces it, and a webhook is turned off and deleted, each after asking.
 */
describe('webhooks, in Chromium', () => {
  let h: BrowserHarness;
  let page: Page;
  let receiver: Receiver;
  const api = apiOf(() => h);

  beforeAll(async () => {
    h = await startBrowser({ config: { webhookIntervalMs: 100 } });
    receiver = await startReceiver();
    page = await adminPage(h, { axe: true });
  });
  afterAll(async () => {
    await h?.close();
    await receiver?.close();
  });

  const task = (title: string) => api<{ id: string }>('POST', '/api/v1/tasks', { title }).then((t) => t.id);

  it('subscribes a URL to chosen events, shows the secret once, and lists what was delivered', async () => {
    await page.getByRole('link', { name: 'Webhooks' }).click();
    await page.waitForURL('**/webhooks');
    await page.getByText('No webhooks yet.').waitFor(WAIT);
    await page.getByLabel('URL').fill(`${receiver.url}/web`);
    await page.getByLabel('Only these').check();
    await page.getByLabel('task.handed_in').check();
    await page.getByLabel('task.status_changed').uncheck();
    await page.getByRole('button', { name: 'Add webhook' }).click();
    const secret = await page.getByTestId('webhook-secret').inputValue();
    expect(secret).toMatch(/^whsec_/);
    receiver.trust('/web', secret);
    const card = page.locator('[data-webhook-id]');
    expect(await card.textContent()).toContain('task.created, task.handed_in');
    expect(await page.getByLabel('URL').inputValue()).toBe('');
    expect(await axeEverywhere(page, 'webhooks')).toEqual([]);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    const id = await task('announced by webhook');
    await vi.waitFor(() => expect(receiver.deliveries.find((d) => d.body.subject === id)).toMatchObject({ verified: true, body: { type: 'task.created' } }), { timeout: 30_000, interval: 100 });
    await card.getByRole('button', { name: 'Deliveries' }).click();
    const row = card.locator('table.deliveries tbody tr').first();
    await row.waitFor(WAIT);
    expect(await row.textContent()).toMatch(/evt_\w+delivered1200/);
    await page.screenshot({ path: join(SHOTS, 'webhooks.png'), fullPage: true });
  });

  it('rotates the secret after asking, and the new one verifies; disables, then deletes after asking', async () => {
    const card = page.locator('[data-webhook-id]');
    await card.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Rotate secret' }).click();
    const fresh = await page.getByTestId('webhook-secret').inputValue();
    expect(fresh).toMatch(/^whsec_/);
    receiver.trust('/web', fresh);
    const id = await task('signed anew');
    await vi.waitFor(() => expect(receiver.deliveries.find((d) => d.body.subject === id)?.verified).toBe(true), { timeout: 30_000, interval: 100 });

    await card.getByRole('button', { name: 'Disable' }).click();
    await card.getByText('Disabled', { exact: true }).waitFor(WAIT);
    await card.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('alertdialog').getByRole('button', { name: 'Delete webhook' }).click();
    await page.getByText('No webhooks yet.').waitFor(WAIT);
    expect((await api<{ data: unknown[] }>('GET', '/api/v1/webhooks')).data).toEqual([]);
  });
});
