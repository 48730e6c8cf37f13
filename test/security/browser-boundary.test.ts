import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

/**
 * What a page on another origin can do with a person's browser (spec/graphql.md "Browsers",
 * spec/identity.md): another site on the same registrable domain gets the `SameSite=Lax` session
 * cookie sent along, so no answer made with it may be readable there.
 */

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

async function signIn(subject: string) {
  return t.server.service.signIn({ issuer: 'https://idp.example', subject, name: `Person ${subject}`, email: `${subject}@example.com`, emailVerified: true, roleValues: [] }, 'test');
}

const EVIL = 'https://evil.example.com';

describe('GraphQL from another origin', () => {
  it('never lets another site read an answer made with the session cookie (no Allow-Credentials)', async () => {
    const { secret } = await signIn('cors-victim');
    const query = encodeURIComponent('{ whoami { principal { id name } } }');
    const res = await t.app.inject({ method: 'GET', url: `/graphql?query=${query}`, headers: { cookie: `baton_session=${secret}`, origin: EVIL, accept: 'application/json' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['access-control-allow-credentials']).toBeUndefined();
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/graphql',
      headers: { origin: EVIL, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type, x-csrf-token' },
    });
    expect(preflight.headers['access-control-allow-credentials']).toBeUndefined();
  });

  it('still answers a bearer-token call from another origin (CORS without credentials)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${t.adminToken}`, origin: EVIL, 'content-type': 'application/json' },
      payload: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['access-control-allow-origin']).toBe(EVIL);
  });
});

describe('single sign-on return_to', () => {
  it('refuses a path whose dot segments resolve to //another-site (an open redirect after sign-in)', async () => {
    // The refusal comes before the provider is asked anything, so an unreachable one will do.
    const sso = await startTestServer({ oidc: { issuer: 'http://127.0.0.1:9', clientId: 'baton', clientSecret: 'secret', name: 'IdP', roleClaim: 'groups', roleMap: [], defaultRole: 'member', required: false } });
    try {
      for (const target of ['/.//evil.example/x', '/tasks/..//evil.example', '/%2e%2e//evil.example']) {
        const res = await sso.app.inject({ method: 'GET', url: `/auth/oidc/login?return_to=${encodeURIComponent(target)}` });
        expect(res.statusCode, target).toBe(400);
        expect(JSON.parse(res.body), target).toMatchObject({ code: 'sign_in_failed' });
        expect(res.headers.location).toBeUndefined();
      }
    } finally {
      await sso.close();
    }
  });
});

describe('every answer', () => {
  it('says X-Content-Type-Options: nosniff, JSON, problems, the served spec and 404s alike', async () => {
    for (const url of ['/api/v1/tasks', '/api/v1/tasks/tsk_nope', '/spec/api.md', '/nowhere', '/healthz']) {
      const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.adminToken}` } });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
    }
  });
});

describe('cookies behind https (BATON_PUBLIC_URL https://…)', () => {
  it('are __Host- named, HttpOnly, SameSite=Lax, Secure, Path=/ and without Domain: the session cookie a switch sets, and the CSRF secret', async () => {
    const tls = await startTestServer({ publicUrl: 'https://baton.example' });
    try {
      const { secret, workspaceId } = await tls.server.service.signIn({ issuer: 'https://idp.example', subject: 'tls', name: 'Person tls', email: 'tls@example.com', emailVerified: true, roleValues: [] }, 'test');
      const session = await tls.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: `__Host-baton_session=${secret}` } });
      const csrfCookie = session.cookies.find((c) => c.name === '__Host-baton_csrf');
      expect(csrfCookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
      expect(csrfCookie?.domain).toBeUndefined();
      const token = JSON.parse(session.body) as { csrf_token: string };
      const switched = await tls.app.inject({
        method: 'POST',
        url: '/auth/workspace',
        headers: { cookie: `__Host-baton_session=${secret}; __Host-baton_csrf=${csrfCookie?.value ?? ''}`, 'x-csrf-token': token.csrf_token, 'content-type': 'application/json' },
        payload: JSON.stringify({ workspace_id: workspaceId }),
      });
      expect(switched.statusCode, switched.body).toBe(200);
      const set = switched.cookies.find((c) => c.name === '__Host-baton_session');
      expect(set).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax', path: '/' });
      expect(set?.domain).toBeUndefined();
      expect(switched.cookies.map((c) => c.name)).not.toContain('baton_session');
    } finally {
      await tls.close();
    }
  });
});
