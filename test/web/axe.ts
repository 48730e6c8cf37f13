import { createRequire } from 'node:module';
import type { AxeResults } from 'axe-core';
import type { Page } from 'playwright-core';

/** axe-core's browser bundle, for `page.addInitScript({ path: AXE })` (an init script is not subject to the app's CSP). */
export const AXE = createRequire(import.meta.url).resolve('axe-core');

/** Serious and critical axe-core violations in light and dark at 1280 and 390 px, and whether the page scrolls sideways at 390. */
export async function axeEverywhere(page: Page, name: string): Promise<string[]> {
  const found: string[] = [];
  for (const scheme of ['light', 'dark'] as const) {
    for (const width of [1280, 390]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: width > 500 ? 800 : 844 });
      const results = await page.evaluate(() => (globalThis as unknown as { axe: { run(): Promise<AxeResults> } }).axe.run());
      for (const v of results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')) {
        found.push(...v.nodes.map((n) => `${name}, ${scheme}, ${width} px: ${v.id}: ${n.target.join(' ')}`));
      }
      if (width === 390 && (await page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth))) found.push(`${name}, ${scheme}, 390 px: scrolls sideways`);
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1280, height: 800 });
  return found;
}
