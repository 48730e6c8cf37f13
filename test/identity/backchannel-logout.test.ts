import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, type JWK, SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { startProvider, type TestProvider } from './provider.ts';

/**
 * Back-channel logout over HTTP (spec/identity.md, "Signing out at the provider"): logout tokens
 * signed with a real provider's key (oidc-provider, started here with a key the test holds) end
 * the sessions they name, and nothing else; tokens that fail any check of OpenID Back-Channel
 * Logout 1.0 §2.6 are refused with a problem and end nothing. test/web/sso.test.ts has the
 * provider itself post one when a person signs out there.
 */

const PUBLIC_URL = 'http://baton.test';
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let t: TestServer;
let idp: TestProvider;
let providerKey: { jwk: JWK; private: CryptoKey };
let strangerKey: CryptoKey;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  providerKey = { jwk: { ...(await exportJWK(pair.privateKey)), kid: 'provider-key', alg: 'RS256', use: 'sig' }, private: pair.privateKey };
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  idp = await startProvider({ redirectUri: `${PUBLIC_URL}/auth/oidc/callback`, accounts: {}, signingKey: providerKey.jwk });
  t = await startTestServer(
    { publicUrl: PUBLIC_URL, oidc: { issuer: idp.issuer, clientId: idp.clientId, clientSecret: idp.clientSecret, name: 'Test IdP', roleClaim: 'groups', roleMap: [], defaultRole: 'member', required: false } },
    { clock },
  );
});
afterAll(async () => {
  await t.close();
  await idp.close();
});

const nowS = () => Math.floor(clock.now().getTime() / 1000);
const LOGOUT_EVENT = { 'http://schemas.openid.net/event/backchannel-logout': {} };

/** A logout token as the provider signs one; `claims` replace or (undefined) remove its members. */
async function logoutToken(claims: Record<string, unknown> = {}, key: CryptoKey = providerKey.private): Promise<string> {
  const payload: Record<string, unknown> = { iss: idp.issuer, aud: idp.clientId, iat: nowS(), jti: randomUUID(), events: LOGOUT_EVENT, ...claims };
  for (const [name, value] of Object.entries(payload)) if (value === undefined) delete payload[name];
  return new SignJWT(payload).setProtectedHeader({ alg: 'RS256', kid: 'provider-key', typ: 'logout+jwt' }).sign(key);
}

async function postLogout(token: string | undefined) {
  const res = await t.app.inject({ method: 'POST', url: '/auth/oidc/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: token === undefined ? '' : new URLSearchParams({ logout_token: token }).toString() });
  return { status: res.statusCode, headers: res.headers, body: res.body, json: () => JSON.parse(res.body) as Record<string, unknown> };
}

/** A sign-in through the provider, as its callback opens it. */
async function signIn(subject: string, sid: string | null, issuer = idp.issuer) {
  return t.server.service.signIn({ issuer, subject, name: `Person ${subject}`, email: null, emailVerified: false, roleValues: [], providerSessionId: sid }, 'test');
}

async function live(secret: string): Promise<boolean> {
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: { cookie: `baton_session=${secret}` } });
  return res.statusCode === 200;
}

describe('a logout token from the provider', () => {
  it('naming a provider session ends the sessions opened in it, as signed out at the provider, and no other', async () => {
    const laptop = await signIn('ana', 'sid-laptop');
    const phone = await signIn('ana', 'sid-phone');
    const res = await postLogout(await logoutToken({ sub: 'ana', sid: 'sid-laptop' }));
    expect(res.status).toBe(200);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(await live(laptop.secret)).toBe(false);
    expect(await live(phone.secret)).toBe(true);
    const events = (await t.request('GET', `/api/v1/events?types=session.signed_out&limit=100`)).json<{ data: { subject: string; actor: { id: string }; data: Record<string, unknown> }[] }>().data;
    expect(events.find((e) => e.subject === laptop.sessionId)).toMatchObject({ actor: { id: laptop.agentId }, data: { agent_id: laptop.agentId, via: 'provider' } });
    expect(events.some((e) => e.subject === phone.sessionId)).toBe(false);
    // Sent again: nothing left to end, still 200.
    expect((await postLogout(await logoutToken({ sub: 'ana', sid: 'sid-laptop' }))).status).toBe(200);
  });

  it('naming only the person ends every session they opened with that provider, not those of another provider or person', async () => {
    const first = await signIn('ben', 'sid-1');
    const second = await signIn('ben', null);
    const elsewhere = await signIn('ben', 'sid-1', 'https://other-idp.example');
    const colleague = await signIn('cat', 'sid-2');
    expect((await postLogout(await logoutToken({ sub: 'ben' }))).status).toBe(200);
    expect(await live(first.secret)).toBe(false);
    expect(await live(second.secret)).toBe(false);
    expect(await live(elsewhere.secret)).toBe(true);
    expect(await live(colleague.secret)).toBe(true);
  });

  it('does not end a sign-in made after it was issued (a replay)', async () => {
    const token = await logoutToken({ sub: 'dan' });
    offsetMs += 2 * 60_000;
    try {
      const later = await signIn('dan', 'sid-later');
      expect((await postLogout(token)).status).toBe(200);
      expect(await live(later.secret)).toBe(true);
    } finally {
      offsetMs -= 2 * 60_000;
    }
  });

  const refused: [string, () => Promise<string>, RegExp][] = [
    ['signed with a key the provider does not hold', () => logoutToken({ sub: 'eve' }, strangerKey), /signature|key/i],
    ['for another client', () => logoutToken({ sub: 'eve', aud: 'someone-else' }), /aud/],
    ['from another issuer', () => logoutToken({ sub: 'eve', iss: 'https://evil.example' }), /iss/],
    ['without the logout event', () => logoutToken({ sub: 'eve', events: { 'https://example.com/other': {} } }), /backchannel-logout/],
    ['without events', () => logoutToken({ sub: 'eve', events: undefined }), /events/],
    ['with a nonce (an ID token)', () => logoutToken({ sub: 'eve', nonce: 'n' }), /nonce/],
    ['naming neither a person nor a session', () => logoutToken({}), /neither/],
    ['without a jti', () => logoutToken({ sub: 'eve', jti: undefined }), /jti/],
    ['issued 10 minutes ago', () => logoutToken({ sub: 'eve', iat: nowS() - 600 }), /iat|age|old/i],
  ];
  it.each(refused)('%s is refused with a problem, and ends nothing', async (_what, make, detail) => {
    const eve = await signIn('eve', 'sid-eve');
    const res = await postLogout(await make());
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ code: 'invalid_parameter', retryable: false });
    expect(res.json().detail).toMatch(detail);
    expect(typeof res.json().hint).toBe('string');
    expect(await live(eve.secret)).toBe(true);
  });

  it('without a logout_token is refused with a problem', async () => {
    const empty = await postLogout(undefined);
    expect(empty.status).toBe(400);
    expect(empty.json()).toMatchObject({ code: 'invalid_parameter', retryable: false });
  });
});

describe('without single sign-on', () => {
  it('answers 404 with a problem', async () => {
    const plain = await startTestServer();
    try {
      const res = await plain.app.inject({ method: 'POST', url: '/auth/oidc/backchannel-logout', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'logout_token=x' });
      expect(res.statusCode).toBe(404);
      expect(JSON.parse(res.body)).toMatchObject({ code: 'route_not_found' });
    } finally {
      await plain.close();
    }
  });
});
