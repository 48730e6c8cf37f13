import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startProvider, type TestProvider } from '../identity/provider.ts';

/**
 * The `__Host-` cookie names behind https (spec/identity.md, "Sessions"): a browser still holding
 * the cookies set before them keeps its session, which moves to the new names; CSRF still holds;
 * after the transition the old names are not read. Over plain http the names stay as they were.
 */

/** The real time (the provider signs with it), until a test moves past the transition. */
let at: Date | undefined;
const clock: Clock = { now: () => (at ? new Date(at) : new Date()) };
const PUBLIC_URL = 'https://baton.example';
let tls: TestServer;
let idp: TestProvider;

beforeAll(async () => {
  idp = await startProvider({ redirectUri: `${PUBLIC_URL}/auth/oidc/callback`, accounts: { ada: { name: 'Ada', email: 'ada@example.com', groups: [] } } });
  const oidc = { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, name: 'IdP', roleClaim: 'groups', roleMap: [], defaultRole: 'member' as const, required: false };
  tls = await startTestServer({ publicUrl: PUBLIC_URL, oidc }, { clock });
}, 60_000);
afterAll(async () => {
  await tls?.close();
  await idp?.close();
});

/**
 * Signs `login` in at the provider as a browser would (its development login and consent forms),
 * from Baton's /auth/oidc/login to the callback URL the provider sends the browser back to.
 */
async function throughProvider(login: string): Promise<{ callback: string; loginCookie: string }> {
  const start = await tls.app.inject({ method: 'GET', url: '/auth/oidc/login' });
  const loginCookie = start.cookies.find((c) => c.name === 'baton_oidc')?.value ?? '';
  const jar = new Map<string, string>();
  let next: { url: string; form?: URLSearchParams } = { url: String(start.headers.location) };
  for (let step = 0; step < 12; step++) {
    if (next.url.startsWith(PUBLIC_URL)) return { callback: next.url, loginCookie };
    const res = await fetch(next.url, { method: next.form ? 'POST' : 'GET', redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') }, ...(next.form ? { body: next.form } : {}) });
    for (const set of res.headers.getSetCookie()) {
      const [pair = ''] = set.split(';');
      const at = pair.indexOf('=');
      jar.set(pair.slice(0, at), pair.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (location) {
      next = { url: new URL(location, next.url).href };
      continue;
    }
    const html = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1] ?? '';
    const form = new URLSearchParams([...html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    if (html.includes('name="login"')) form.set('login', login);
    if (html.includes('name="password"')) form.set('password', 'any');
    next = { url: new URL(action, next.url).href, form };
  }
  throw new Error(`the provider did not send the browser back: ${next.url}`);
}

async function signIn(subject: string) {
  return tls.server.service.signIn({ issuer: 'https://idp.example', subject, name: `Person ${subject}`, email: `${subject}@example.com`, emailVerified: true, roleValues: [] }, 'test');
}

function inject(method: 'GET' | 'POST', url: string, cookie: string, headers: Record<string, string> = {}, body?: unknown) {
  return tls.app.inject({ method, url, headers: { cookie, ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() }) }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
}

describe('a sign-in behind https', () => {
  it('sets the session cookie as __Host-baton_session: HttpOnly, Secure, SameSite=Lax, Path=/, no Domain', async () => {
    const { callback, loginCookie } = await throughProvider('ada');
    const res = await tls.app.inject({ method: 'GET', url: callback.slice(PUBLIC_URL.length), headers: { cookie: `baton_oidc=${loginCookie}` } });
    expect(res.statusCode, res.body).toBe(303);
    const set = res.cookies.find((c) => c.name === '__Host-baton_session');
    expect(set).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/', maxAge: tls.server.service.config.session.absoluteS });
    expect(set?.domain).toBeUndefined();
    expect(res.cookies.map((c) => c.name)).not.toContain('baton_session');
    const session = await inject('GET', '/auth/session', `__Host-baton_session=${set?.value ?? ''}`);
    expect(session.json<{ session: { id: string } | null }>().session?.id).toMatch(/^ses_/);
    expect(session.cookies.find((c) => c.name === '__Host-baton_csrf')).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
  });
});

describe('a session cookie under its name from before __Host-', () => {
  it('still signs the person in, and the answer moves it to __Host-baton_session (same secret, the right attributes) and clears the old one', async () => {
    const { secret, agentId } = await signIn('old-cookie');
    const res = await inject('GET', '/auth/session', `baton_session=${secret}`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ session: { principal_id: agentId } });
    const moved = res.cookies.find((c) => c.name === '__Host-baton_session');
    expect(moved).toMatchObject({ value: secret, httpOnly: true, secure: true, sameSite: 'Lax', path: '/', maxAge: tls.server.service.config.session.absoluteS });
    expect(moved?.domain).toBeUndefined();
    const cleared = res.cookies.find((c) => c.name === 'baton_session');
    expect(cleared?.value).toBe('');
    expect(cleared?.expires?.getTime()).toBeLessThanOrEqual(Date.now());
    // The new name alone works from then on.
    const me = await inject('GET', '/api/v1/whoami', `__Host-baton_session=${moved?.value ?? ''}`);
    expect(me.json()).toMatchObject({ principal: { id: agentId } });
  });

  it('keeps a write with the old CSRF cookie and its token working, and still refuses a write without the token', async () => {
    const { secret } = await signIn('old-csrf');
    // What the browser held before the upgrade: both cookies under their old names, and a token made
    // with them. The CSRF secret cookie's value does not depend on its name, so this server makes it.
    const before = await inject('GET', '/auth/session', `__Host-baton_session=${secret}`);
    const csrfCookie = before.cookies.find((c) => c.name === '__Host-baton_csrf')?.value ?? '';
    const token = before.json<{ csrf_token: string }>().csrf_token;
    expect(csrfCookie).not.toBe('');
    const old = `baton_session=${secret}; baton_csrf=${csrfCookie}`;
    const refused = await inject('POST', '/api/v1/tasks', old, {}, { title: 'No token' });
    expect(refused.statusCode, refused.body).toBe(403);
    expect(refused.json()).toMatchObject({ code: 'csrf_failed' });
    const wrong = await inject('POST', '/api/v1/tasks', old, { 'x-csrf-token': 'not-the-token' }, { title: 'Wrong token' });
    expect(wrong.json()).toMatchObject({ code: 'csrf_failed' });
    const made = await inject('POST', '/api/v1/tasks', old, { 'x-csrf-token': token }, { title: 'Made across the upgrade' });
    expect(made.statusCode, made.body).toBe(201);
    expect(made.cookies.find((c) => c.name === '__Host-baton_csrf')?.value).toBe(csrfCookie);
    // The moved cookies carry the same session and CSRF secret: the app's token still fits.
    const again = await inject('POST', '/api/v1/tasks', `__Host-baton_session=${secret}; __Host-baton_csrf=${csrfCookie}`, { 'x-csrf-token': token }, { title: 'Under the new names' });
    expect(again.statusCode, again.body).toBe(201);
  });

  it('prefers the __Host- cookie when both names come (an old one set by a sibling subdomain cannot shadow it)', async () => {
    const mine = await signIn('both-mine');
    const theirs = await signIn('both-theirs');
    const res = await inject('GET', '/auth/session', `baton_session=${theirs.secret}; __Host-baton_session=${mine.secret}`);
    expect(res.json()).toMatchObject({ session: { principal_id: mine.agentId } });
    expect(res.cookies.find((c) => c.name === '__Host-baton_session')).toBeUndefined();
    expect(res.cookies.find((c) => c.name === 'baton_session')?.value).toBe('');
  });

  it('is no longer read from 2027-03-01 (the transition the spec records): it is cleared, and the person signs in again', async () => {
    at = new Date('2027-03-01T00:00:00Z');
    const { secret } = await signIn('after-transition');
    const res = await inject('GET', '/auth/session', `baton_session=${secret}`);
    expect(res.json()).toMatchObject({ session: null });
    expect(res.cookies.find((c) => c.name === '__Host-baton_session')).toBeUndefined();
    expect(res.cookies.find((c) => c.name === 'baton_session')?.value).toBe('');
    const write = await inject('POST', '/api/v1/tasks', `baton_session=${secret}`, {}, { title: 'Old name after the transition' });
    expect(write.statusCode).toBe(401);
    expect((await inject('GET', '/auth/session', `__Host-baton_session=${secret}`)).json<{ session: { id: string } | null }>().session?.id).toMatch(/^ses_/);
  });
});

describe('over plain http (development)', () => {
  it('keeps the plain names: __Host- needs Secure, which a browser refuses over http', async () => {
    const plain = await startTestServer({ publicUrl: 'http://127.0.0.1:4210' });
    try {
      const { secret } = await plain.server.service.signIn({ issuer: 'https://idp.example', subject: 'plain', name: 'Person plain', email: 'plain@example.com', emailVerified: true, roleValues: [] }, 'test');
      const res = await plain.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: `baton_session=${secret}` } });
      expect(res.json<{ session: { id: string } | null }>().session?.id).toMatch(/^ses_/);
      expect(res.cookies.map((c) => c.name)).toEqual(['baton_csrf']);
      expect(res.cookies[0]?.secure).toBeFalsy();
    } finally {
      await plain.close();
    }
  });
});
