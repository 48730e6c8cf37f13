import type { Page } from 'playwright-core';
import { WAIT } from './browser.ts';

/** Logs in at the provider's development pages (any password) and consents, until the browser is back at Baton. */
export async function atProvider(page: Page, base: string, login: string): Promise<void> {
  for (let step = 0; step < 4 && !page.url().startsWith(base); step++) {
    const field = page.locator('input[name=login]');
    if (await field.isVisible()) {
      await field.fill(login);
      await page.fill('input[name=password]', 'any');
      await Promise.all([page.waitForURL((url) => !url.href.includes('/login'), WAIT).catch(() => undefined), page.click('button[type=submit]')]);
    } else {
      await Promise.all([page.waitForURL((url) => url.href.startsWith(base) || url.href.includes('/interaction/'), WAIT).catch(() => undefined), page.click('button[type=submit]')]);
    }
    await page.waitForLoadState();
  }
}
