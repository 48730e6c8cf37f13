import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import type { Clock } from '../../src/clock.ts';
import type { Config } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { AXE } from './axe.ts';

/** Debian's Chromium; never a downloaded browser (.ci/run installs the package when it is missing). */
const CHROMIUM = '/usr/bin/chromium';
const FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

/**
 * Where the browser tests write their screenshots: the committed `docs/screenshots/` (shown in the
 * README) under `npm run screenshots`, else the ignored `test-results/screenshots/`, so `npm test`
 * leaves a clone as it found it. Ends with a slash.
 */
export const SHOTS = fileURLToPath(new URL(process.env.BATON_SCREENSHOTS === 'docs' ? '../../docs/screenshots/' : '../../test-results/screenshots/', import.meta.url));

/** How long a test waits for what the app shows after a round trip to the server. */
export const WAIT = { timeout: 15_000 };

/**
 * Picks `name` in a principal picker (web/src/principal-picker.tsx) as a person does: types the
 * start of the name, then clicks the match in the list that opens.
 */
export async function pick(picker: Locator, name: string): Promise<void> {
  await picker.click();
  await picker.fill(name.slice(0, 4));
  const list = picker.page().locator(`[id="${await picker.getAttribute('aria-controls')}"]`);
  await list.getByRole('option', { name, exact: true }).click(WAIT);
}

/** Signs in on the app's sign-in form with a token and waits for the board. */
export async function signIn(page: Page, token: string): Promise<void> {
  await page.fill('#token', token);
  await page.click('button[type=submit]');
  await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
}

export interface BrowserHarness {
  readonly t: TestServer;
  /** http://127.0.0.1:<port> of the listening server. */
  readonly base: string;
  readonly context: BrowserContext;
  close(): Promise<void>;
}

/** A real listening Baton on a fresh database (port 0; config overrides and clock if given) and one headless Chromium with a fresh profile. */
export async function startBrowser(options: { config?: Partial<Config>; clock?: Clock } = {}): Promise<BrowserHarness> {
  const t = await startTestServer(options.config, options.clock ? { clock: options.clock } : {});
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const profile = await mkdtemp(join(tmpdir(), 'baton-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: FLAGS,
    viewport: { width: 1280, height: 800 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  return {
    t,
    base,
    context,
    async close() {
      await context.close();
      await rm(profile, { recursive: true, force: true });
      // The browser is gone; a keep-alive socket it left half-open would hold close() for Fastify's 72 s keep-alive.
      t.app.server.closeAllConnections();
      await t.close();
    },
  };
}

/** A new page of the harness's browser, signed in with the admin token, on the board; `axe` loads axe-core into every document it opens. */
export async function adminPage(h: BrowserHarness, options: { axe?: boolean } = {}): Promise<Page> {
  const page = await h.context.newPage();
  page.setDefaultTimeout(10_000);
  if (options.axe) await page.addInitScript({ path: AXE });
  await page.goto(h.base);
  await signIn(page, h.t.adminToken);
  return page;
}

/** A REST call through the harness (the admin's token unless another is given) that throws on any status from 300 up. */
export function apiOf(h: () => BrowserHarness) {
  return async <T>(method: string, url: string, body?: unknown, token?: string): Promise<T> => {
    const res = await h().t.request(method, url, { ...(token ? { token } : {}), ...(body === undefined ? {} : { body }) });
    if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.body}`);
    return res.json<T>();
  };
}
