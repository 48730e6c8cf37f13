import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, chromium, type Page } from 'playwright-core';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startProvider, type TestProvider } from '../identity/provider.ts';
import { atProvider } from './provider-pages.ts';
import { AXE, axeEverywhere } from './axe.ts';
import { SHOTS, WAIT } from './browser.ts';

/**
 * Single sign-on end to end (spec/identity.md): Chromium, a listening Baton, and real OpenID
 * providers (oidc-provider) started here. The ID token lives 60 s; Baton's clock is the test's.
 * Last, a person's workspaces: invited to a second one, they switch to it in the top bar.
 */

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let t: TestServer;
let idp: TestProvider;
let other: TestProvider;
let browser: Browser;
let base: string;

const ACCOUNTS = {
  ada: { name: 'Ada Lovelace', email: 'ada@example.com', groups: ['baton-admins'] },
  bob: { name: 'Bob Builder', email: 'bob@example.com', groups: ['staff'] },
  eve: { name: 'Eve Early', email: 'eve@example.com', groups: [] },
  cy: { name: 'Cy Switcher', email: 'cy@example.com', groups: [] },
  dee: { name: 'Dee Departing', email: 'dee@example.com', groups: [] },
};

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  const redirectUri = `${base}/auth/oidc/callback`;
  idp = await startProvider({ redirectUri, accounts: ACCOUNTS, idTokenTtlS: 60, backchannelLogoutUri: `${base}/auth/oidc/backchannel-logout` });
  other = await startProvider({ redirectUri, accounts: ACCOUNTS });
  t = await startTestServer(
    {
      publicUrl: base,
      oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, name: 'Test IdP', roleClaim: 'groups', roleMap: [['baton-admins', 'admin']], defaultRole: 'member', required: false },
    },
    { clock },
  );
  await t.app.listen({ port, host: '127.0.0.1' });
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
}, 120_000);

afterAll(async () => {
  await browser.close();
  t.app.server.closeAllConnections();
  await t.close();
  await idp.close();
  await other.close();
});

/** Signs in through the provider from `start`; answers the callback URL the provider sent the browser to (already visited). */
async function through(page: Page, login: string, start = `${base}/auth/oidc/login`): Promise<string> {
  let callback = '';
  const seen = (request: { url(): string }) => {
    if (request.url().startsWith(`${base}/auth/oidc/callback`)) callback = request.url();
  };
  page.on('request', seen);
  await page.goto(start);
  await atProvider(page, base, login);
  await expect.poll(() => callback, WAIT).toContain('code=');
  page.off('request', seen);
  return callback;
}

/** The person signed in through the provider in two browsers (their laptop, with axe loaded, and their phone). */
async function signedInTwice(login: string, name: string) {
  const laptop = await browser.newContext();
  const phone = await browser.newContext();
  await laptop.addInitScript({ path: AXE });
  const page = await laptop.newPage();
  const other = await phone.newPage();
  for (const each of [page, other]) {
    await each.goto(`${base}/auth/oidc/login`);
    await atProvider(each, base, login);
    await each.getByRole('link', { name }).waitFor(WAIT);
  }
  return { laptop, phone, page, other };
}

async function sessionIdOf(page: Page): Promise<string> {
  return page.evaluate(async () => ((await (await fetch('/auth/session')).json()) as { session: { id: string } }).session.id);
}

/** The problem the failure page shows a person (its heading, code and detail). */
async function shownProblem(page: Page): Promise<{ heading: string; code: string; detail: string }> {
  await page.waitForLoadState();
  const main = page.locator('main[data-code]');
  return { heading: (await main.locator('h1').textContent()) ?? '', code: (await main.getAttribute('data-code')) ?? '', detail: (await main.locator('.detail').textContent()) ?? '' };
}

async function problemAt(page: Page, url: string): Promise<{ status: number; code: string; detail: string }> {
  const res = await page.goto(url);
  return { status: res?.status() ?? 0, ...(await shownProblem(page)) };
}

async function signedIn(page: Page): Promise<boolean> {
  return page.evaluate(async () => ((await (await fetch('/auth/session')).json()) as { session: unknown }).session !== null);
}

describe('single sign-on in Chromium', () => {
  it('signs a person in with the provider, lands where they were going, and every new tab and shared link is signed in', { timeout: 120_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/approvals`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).click();
    await atProvider(page, base, 'ada');
    await page.waitForURL(`${base}/approvals`, WAIT);
    await page.getByRole('link', { name: 'Ada Lovelace' }).waitFor(WAIT);

    // A shared link opened in a new tab: no sign-in page, no token.
    const tab = await context.newPage();
    await tab.goto(`${base}/agents`);
    await tab.locator('#main').getByRole('link', { name: 'Ada Lovelace' }).waitFor(WAIT);
    // First sign-in made the person: admin by the groups claim, linked to the provider.
    const people = (await t.request('GET', '/api/v1/agents?kind=human')).json<{ data: { name: string; role: string; id: string }[] }>().data;
    expect(people.find((p) => p.name === 'Ada Lovelace')).toMatchObject({ role: 'admin' });

    // Their sessions page lists this browser; writes work with the cookie and its CSRF token.
    await tab.goto(`${base}/sessions`);
    await tab.getByText('This browser').waitFor(WAIT);
    const made = await tab.evaluate(async () => {
      const auth = (await (await fetch('/auth/session')).json()) as { csrf_token: string };
      const res = await fetch('/api/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID(), 'x-csrf-token': auth.csrf_token }, body: JSON.stringify({ title: 'Made by Ada over SSO' }) });
      return res.status;
    });
    expect(made).toBe(201);

    // Sign-out ends it on the server: the other tab is signed out at its next request.
    await tab.getByRole('button', { name: 'Sign out' }).click();
    await tab.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor(WAIT);
    // The app shows its sign-in page at once and ends the session on the server meanwhile.
    await expect.poll(() => signedIn(page), WAIT).toBe(false);
    await context.close();
  });

  it('ends another of the person’s sessions from /sessions: that browser is signed out at its next request', { timeout: 120_000 }, async () => {
    const { laptop, phone, page, other } = await signedInTwice('eve', 'Eve Early');
    const otherId = await sessionIdOf(other);
    await page.goto(`${base}/sessions`);
    await page.getByText('This browser').waitFor(WAIT);
    const row = page.locator(`tr[data-session-id="${otherId}"]`);
    expect(await axeEverywhere(page, 'sessions')).toEqual([]);
    await row.getByRole('button', { name: 'End session' }).click();
    await row.waitFor({ state: 'detached', ...WAIT });
    expect(await signedIn(other)).toBe(false);
    expect(await signedIn(page)).toBe(true);
    // The other browser's next request meets the sign-in page.
    await other.goto(`${base}/agents`);
    await other.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor(WAIT);
    await laptop.close();
    await phone.close();
  });

  it('signing out at the provider ends that browser’s session in Baton at once (back-channel logout), not the person’s other sign-in', { timeout: 120_000 }, async () => {
    const { laptop, phone, page, other } = await signedInTwice('dee', 'Dee Departing');
    const sessionId = await sessionIdOf(page);
    // At the provider, as the person would: its sign-out page, confirmed. It posts a logout token to Baton.
    await page.goto(`${idp.issuer}/session/end`);
    await page.getByRole('button', { name: /yes/i }).click();
    await page.waitForURL((url) => !url.pathname.startsWith('/session/end/confirm'), WAIT);
    await page.goto(`${base}/agents`);
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor(WAIT);
    expect(await signedIn(page)).toBe(false);
    expect(await signedIn(other)).toBe(true);
    const ended = (await t.request('GET', '/api/v1/events?types=session.signed_out&limit=100')).json<{ data: { subject: string; data: { via?: string } }[] }>().data;
    expect(ended.find((e) => e.subject === sessionId)?.data.via).toBe('provider');
    await laptop.close();
    await phone.close();
  });

  it('refuses a return_to that points off-site: no redirect anywhere', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    for (const target of ['https://evil.example/', '//evil.example/x', '/\\evil.example']) {
      const problem = await problemAt(page, `${base}/auth/oidc/login?return_to=${encodeURIComponent(target)}`);
      expect(problem).toMatchObject({ status: 400, code: 'sign_in_failed' });
      expect(page.url().startsWith(base)).toBe(true);
    }
    await context.close();
  });

  it('refuses a callback with a wrong state', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    const used = new URL(await through(page, 'bob'));
    // A new sign-in is in progress in this browser; a callback carrying another state is refused before its code is used.
    await page.evaluate(async () => void (await fetch('/auth/oidc/login', { redirect: 'manual' })));
    used.searchParams.set('state', 'forged-state');
    const problem = await problemAt(page, used.href);
    expect(problem).toMatchObject({ status: 400, code: 'sign_in_failed' });
    expect(problem.detail).toMatch(/state/);
    await context.close();
  });

  it('refuses a replayed code, even with the sign-in cookie it came with', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    let used = '';
    page.on('request', (request) => {
      if (request.url().startsWith(`${base}/auth/oidc/callback`)) used = request.url();
    });
    await page.goto(`${base}/auth/oidc/login`);
    const loginCookie = (await context.cookies(`${base}/auth/oidc/callback`)).find((c) => c.name === 'baton_oidc')?.value ?? '';
    await atProvider(page, base, 'bob');
    await page.getByRole('link', { name: 'Bob Builder' }).waitFor(WAIT);
    // The same browser again: its sign-in cookie was used up.
    expect(await problemAt(page, used)).toMatchObject({ status: 400, code: 'sign_in_failed' });
    // An attacker replaying the whole request, cookie included: the provider refuses the used code.
    expect(loginCookie).not.toBe('');
    const replay = await fetch(used, { headers: { cookie: `baton_oidc=${loginCookie}` }, redirect: 'manual' });
    expect(replay.status).toBe(400);
    expect(((await replay.json()) as { detail: string }).detail).toMatch(/invalid_grant/);
    await context.close();
  });

  it('refuses an expired ID token', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/auth/oidc/login`);
    // The ID token lives 60 s (30 s of tolerance); the sign-in itself 10 minutes: Baton's clock is 5 minutes on when it comes back.
    offsetMs = 5 * 60_000;
    try {
      await atProvider(page, base, 'bob');
      await page.waitForURL(`${base}/auth/oidc/callback**`, WAIT);
      const problem = await shownProblem(page);
      expect(problem.code).toBe('sign_in_failed');
      expect(problem.detail).toMatch(/exp|timestamp/);
    } finally {
      offsetMs = 0;
    }
    expect(await signedIn(page)).toBe(false);
    await context.close();
  });

  it('refuses an answer from another provider (iss mix-up)', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    // Baton's authorization request, sent to the other provider instead: it answers with its own code and iss.
    const start = await fetch(`${base}/auth/oidc/login`, { redirect: 'manual' });
    const authorize = new URL(start.headers.get('location') ?? '');
    const loginCookie = /baton_oidc=([^;]+)/.exec(start.headers.get('set-cookie') ?? '')?.[1] ?? '';
    await context.addCookies([{ name: 'baton_oidc', value: loginCookie, url: `${base}/auth/oidc` }]);
    const callback = await through(page, 'bob', new URL(authorize.pathname + authorize.search, other.issuer).href);
    expect(new URL(callback).searchParams.get('iss')).toBe(other.issuer);
    const problem = await shownProblem(page);
    expect(problem.code).toBe('sign_in_failed');
    expect(problem.detail).toMatch(/iss/);
    expect(await signedIn(page)).toBe(false);
    await context.close();
  });

  it('refuses a disabled person at their next request, and at their next sign-in', { timeout: 60_000 }, async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${base}/auth/oidc/login?return_to=%2Factivity`);
    await atProvider(page, base, 'eve');
    await page.waitForURL(`${base}/activity`, WAIT);
    // The top bar's link to the person's own page (the activity list names Eve too, now that members see names).
    await page.locator('a.who', { hasText: 'Eve Early' }).waitFor(WAIT);
    const eve = (await t.request('GET', '/api/v1/agents?kind=human')).json<{ data: { name: string; id: string; role: string }[] }>().data.find((p) => p.name === 'Eve Early');
    expect(eve?.role).toBe('member');
    expect((await t.request('PATCH', `/api/v1/agents/${eve?.id}`, { body: { disabled: true } })).status).toBe(200);
    const status = await page.evaluate(async () => (await fetch('/api/v1/whoami')).status);
    expect(status).toBe(401);
    await page.reload();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor(WAIT);
    await through(page, 'eve');
    const refused = await shownProblem(page);
    expect(refused.code).toBe('sign_in_failed');
    // What the person reads says who can help, not "start again".
    expect(refused.heading).toBe('Your Baton account is disabled');
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}/sso-disabled.png` });
    await page.getByRole('link', { name: 'Back to the sign-in page' }).click();
    await page.getByRole('link', { name: 'Sign in with Test IdP' }).waitFor(WAIT);
    await context.close();
  });
});

describe('a provider that gives the profile at userinfo only', () => {
  // As OpenID Core §5.4 says of the code flow (oidc-provider's default): the ID token carries no name, email or groups.
  let profileAtUserinfo: { t: TestServer; idp: TestProvider; base: string };
  beforeAll(async () => {
    const port = await freePort();
    const at = `http://127.0.0.1:${port}`;
    const provider = await startProvider({ redirectUri: `${at}/auth/oidc/callback`, accounts: { grace: { name: 'Grace Hopper', email: 'grace@example.com', groups: ['baton-admins'] } }, claimsAt: 'userinfo' });
    const server = await startTestServer({
      publicUrl: at,
      oidc: { issuer: provider.issuer, clientId: provider.clientId, clientSecret: provider.clientSecret, name: 'Test IdP', roleClaim: 'groups', roleMap: [['baton-admins', 'admin']], defaultRole: 'member', required: false },
    });
    await server.app.listen({ port, host: '127.0.0.1' });
    profileAtUserinfo = { t: server, idp: provider, base: at };
  }, 60_000);
  afterAll(async () => {
    profileAtUserinfo.t.app.server.closeAllConnections();
    await profileAtUserinfo.t.close();
    await profileAtUserinfo.idp.close();
  });

  it('still provisions the person with their name, email and mapped role', { timeout: 60_000 }, async () => {
    const { t: server, base: at } = profileAtUserinfo;
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${at}/auth/oidc/login`);
    await atProvider(page, at, 'grace');
    await page.getByRole('link', { name: 'Grace Hopper' }).waitFor(WAIT);
    const grace = (await server.request('GET', '/api/v1/agents?kind=human')).json<{ data: { id: string; name: string; role: string }[] }>().data.find((p) => p.name === 'Grace Hopper');
    expect(grace?.role).toBe('admin');
    const row = await server.database.db.selectFrom('agents').select('email').where('id', '=', grace?.id ?? '').executeTakeFirst();
    expect(row?.email).toBe('grace@example.com');
    await context.close();
  });
});

describe('workspaces in Chromium', () => {
  it('shows a person invited to a second workspace a switcher; there they see its board only, with the role they were given', { timeout: 120_000 }, async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await context.addInitScript({ path: AXE });
    const page = await context.newPage();
    const card = (title: string) => page.locator('article.task-card', { hasText: title });
    await page.goto(`${base}/auth/oidc/login`);
    await atProvider(page, base, 'cy');
    await page.getByRole('heading', { name: 'Board' }).waitFor(WAIT);
    // One workspace: its name, nothing to switch to.
    const name = page.locator('header .workspace-name');
    await name.waitFor(WAIT);
    expect(await name.textContent()).toBe('Workspace: default');

    // An owner makes Beta and invites the person there as a viewer, by the email the provider verifies.
    const made = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Beta' } });
    expect(made.status, made.body).toBe(201);
    const betaOwner = made.json<{ token: string }>().token;
    const invited = await t.request('POST', '/api/v1/agents', { token: betaOwner, body: { name: 'Cy Switcher', kind: 'human', email: 'cy@example.com', role: 'viewer' } });
    expect(invited.status, invited.body).toBe(201);

    // Their next sign-in takes the invitation up: the switcher, in the workspace they were in.
    await page.goto(`${base}/auth/oidc/login`);
    await atProvider(page, base, 'cy');
    const inDefault = page.getByRole('button', { name: 'Workspace: default' });
    await inDefault.waitFor(WAIT);
    // A member in default: they create a task there.
    await page.getByRole('button', { name: 'New task' }).click();
    const dialog = page.getByRole('dialog', { name: 'New task' });
    await dialog.getByLabel('Title').fill('Cy in default');
    await dialog.getByRole('button', { name: 'Create task' }).click();
    await card('Cy in default').waitFor(WAIT);

    // From the keyboard: the toggle opens a list of the other workspaces, the first focused; Escape closes it.
    await inDefault.focus();
    await page.keyboard.press('Enter');
    const others = page.getByRole('group', { name: 'Switch to workspace' });
    await others.waitFor(WAIT);
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Beta');
    await mkdir(SHOTS, { recursive: true });
    await page.screenshot({ path: `${SHOTS}workspace-switcher.png` });
    expect(await axeEverywhere(page, 'the workspace switcher, open')).toEqual([]);
    await page.keyboard.press('Escape');
    await others.waitFor({ state: 'detached', ...WAIT });
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-expanded'))).toBe('false');

    // Beta: its board, without default's task; a viewer there, they are offered no way to create one, and the API refuses.
    await inDefault.click();
    await others.getByRole('button', { name: 'Beta' }).click();
    const inBeta = page.getByRole('button', { name: 'Workspace: Beta' });
    await inBeta.waitFor(WAIT);
    await page.getByText('No tasks yet').waitFor(WAIT);
    expect(await card('Cy in default').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'New task' }).count()).toBe(0);
    await page.keyboard.press('c');
    expect(await page.getByRole('dialog', { name: 'New task' }).count()).toBe(0);
    const refused = await page.evaluate(async () => {
      const auth = (await (await fetch('/auth/session')).json()) as { csrf_token: string };
      const res = await fetch('/api/v1/tasks', { method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID(), 'x-csrf-token': auth.csrf_token }, body: JSON.stringify({ title: 'Cy in Beta' }) });
      return res.status;
    });
    expect(refused).toBe(403);

    // And back, from the keyboard: default's board again.
    await inBeta.focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Workspace: default' }).waitFor(WAIT);
    await card('Cy in default').waitFor(WAIT);
    await context.close();
  });
});
