import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OidcConfig } from '../../src/config.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startProvider, type TestProvider } from './provider.ts';

/**
 * A sign-in that fails in a person's browser (spec/identity.md, "Refusals"): a page that says what
 * happened and who can fix it, not a JSON document; a script asking for JSON keeps the problem. The
 * provider is a real one (oidc-provider); Baton is set up wrong against it, or points at nothing.
 */

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
const PUBLIC_URL = 'http://127.0.0.1:4899';
let idp: TestProvider;
let basicOnly: TestProvider;
let wrongSecret: TestServer;
let unreachable: TestServer;
let atBasicOnly: TestServer;

function oidc(issuer: string, clientSecret: string): OidcConfig {
  return { issuer, clientId: 'baton', clientSecret, name: 'Acme SSO', roleClaim: 'groups', roleMap: [], defaultRole: 'member', required: false };
}

beforeAll(async () => {
  idp = await startProvider({ redirectUri: `${PUBLIC_URL}/auth/oidc/callback`, accounts: {} });
  wrongSecret = await startTestServer({ publicUrl: PUBLIC_URL, oidc: oidc(idp.issuer, 'not-the-secret') });
  // Port 9 (discard) on loopback: nothing listens, so discovery fails at once.
  unreachable = await startTestServer({ publicUrl: PUBLIC_URL, oidc: oidc('http://127.0.0.1:9', 'secret') });
  basicOnly = await startProvider({ redirectUri: `${PUBLIC_URL}/auth/oidc/callback`, accounts: {}, clientAuth: 'client_secret_basic' });
  atBasicOnly = await startTestServer({ publicUrl: PUBLIC_URL, oidc: oidc(basicOnly.issuer, basicOnly.clientSecret) });
}, 60_000);
afterAll(async () => {
  await wrongSecret.close();
  await unreachable.close();
  await atBasicOnly.close();
  await idp.close();
  await basicOnly.close();
});

/** Starts a sign-in as a browser does; answers the sign-in cookie and the state the provider would send back. */
async function startSignIn(t: TestServer): Promise<{ cookie: string; state: string }> {
  const res = await t.app.inject({ method: 'GET', url: '/auth/oidc/login', headers: { accept: BROWSER_ACCEPT } });
  expect(res.statusCode).toBe(302);
  const set = res.cookies.find((c) => c.name === 'baton_oidc');
  const state = new URL(String(res.headers.location)).searchParams.get('state');
  if (!set || !state) throw new Error('no sign-in started');
  return { cookie: `baton_oidc=${set.value}`, state };
}

async function callback(t: TestServer, query: Record<string, string>, accept: string, issuer = idp.issuer) {
  const { cookie, state } = await startSignIn(t);
  const params = new URLSearchParams({ state, iss: issuer, ...query });
  return t.app.inject({ method: 'GET', url: `/auth/oidc/callback?${params}`, headers: { accept, cookie } });
}

describe('a sign-in that fails in the browser', () => {
  it('says single sign-on is set up wrong, and to tell the operator, when the provider refuses Baton\'s client secret', async () => {
    const res = await callback(wrongSecret, { code: 'any-code' }, BROWSER_ACCEPT);
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Single sign-on is not set up correctly');
    expect(res.body).toContain('tell whoever runs this Baton server');
    expect(res.body).toContain('invalid_client');
    expect(res.body).toContain('href="/"');
  });

  it('says the person was not let in when the provider answers access_denied', async () => {
    const res = await callback(wrongSecret, { error: 'access_denied', error_description: 'User is not assigned to the client application.' }, BROWSER_ACCEPT);
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain('Acme SSO did not let you in');
    expect(res.body).toContain('User is not assigned to the client application.');
  });

  it('says the provider cannot be reached, with a way to try again, when discovery fails', async () => {
    const res = await unreachable.app.inject({ method: 'GET', url: '/auth/oidc/login', headers: { accept: BROWSER_ACCEPT } });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('Acme SSO cannot be reached');
    expect(res.body).toContain('href="/auth/oidc/login"');
  });

  it('escapes what the provider says', async () => {
    const res = await callback(wrongSecret, { error: 'access_denied', error_description: '<script>alert(1)</script>' }, BROWSER_ACCEPT);
    expect(res.body).not.toContain('<script>alert');
    expect(res.body).toContain('&#60;script&#62;');
  });

  it('still answers problem+json, naming the provider\'s error, to a client that asks for JSON', async () => {
    const res = await callback(wrongSecret, { code: 'any-code' }, 'application/json');
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_failed', provider_error: 'invalid_client' });
  });
});

describe('client authentication at the token endpoint', () => {
  it('uses HTTP Basic when the provider takes only that: a made-up code is refused as a code, not as a client', async () => {
    const res = await callback(atBasicOnly, { code: 'made-up-code' }, 'application/json', basicOnly.issuer);
    expect(res.statusCode).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ code: 'sign_in_failed', provider_error: 'invalid_grant' });
  });
});
