import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Clock } from '../../src/clock.ts';
import { startTestServer, type TestServer } from '../harness.ts';

/**
 * Cookie sessions over HTTP (spec/identity.md): CSRF on cookie writes, idle and absolute timeouts
 * on the injectable clock, sign-out and revocation, roles. Sessions are opened through the
 * service's signIn, as the OIDC callback opens them (test/web/sso.test.ts drives that callback
 * against a real provider).
 */

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ session: { idleS: 3600, absoluteS: 8 * 3600 } }, { clock });
});
afterAll(() => t.close());

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0 Safari/537.36';

async function signIn(subject: string, roleValues: string[] = []) {
  return t.server.service.signIn({ issuer: 'https://idp.example', subject, name: `Person ${subject}`, email: `${subject}@example.com`, emailVerified: true, roleValues }, CHROME);
}

/** A request with the session cookie and no bearer token. */
async function withCookie(secret: string, method: string, url: string, options: { body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await t.app.inject({
    method: method as 'GET',
    url,
    headers: { cookie: `baton_session=${secret}${options.headers?.cookie ? `; ${options.headers.cookie}` : ''}`, ...(method === 'GET' ? {} : { 'idempotency-key': crypto.randomUUID() }), ...withoutCookie(options.headers) },
    ...(options.body === undefined ? {} : { payload: options.body as object }),
  });
  return { status: res.statusCode, json: <T = Record<string, unknown>>() => JSON.parse(res.body) as T, headers: res.headers, body: res.body, cookies: res.cookies };
}

function withoutCookie(headers: Record<string, string> = {}): Record<string, string> {
  const { cookie: _cookie, ...rest } = headers;
  return rest;
}

/** The CSRF token and its secret cookie, as the app gets them from GET /auth/session. */
async function csrf(secret: string): Promise<{ token: string; cookie: string }> {
  const res = await withCookie(secret, 'GET', '/auth/session');
  const body = res.json<{ csrf_token: string; session: { id: string } }>();
  const set = res.cookies.find((c) => c.name === 'baton_csrf');
  if (!set) throw new Error('no CSRF cookie');
  return { token: body.csrf_token, cookie: `baton_csrf=${set.value}` };
}

describe('a cookie session', () => {
  it('reads with the cookie alone, as the person, with their role\'s scopes', async () => {
    const { secret, agentId } = await signIn('reader');
    const me = await withCookie(secret, 'GET', '/api/v1/whoami');
    expect(me.status).toBe(200);
    expect(me.json<{ principal: { id: string; kind: string }; scopes: string[] }>().principal).toMatchObject({ id: agentId, kind: 'human' });
    expect(me.json<{ scopes: string[] }>().scopes).toContain('tasks:write');
  });

  it('refuses a cross-site form post and a cross-site fetch with the cookie (no CSRF token): 403 csrf_failed, nothing written', async () => {
    const { secret } = await signIn('csrf-victim');
    const before = (await t.request('GET', '/api/v1/tasks?limit=100')).json<{ data: unknown[] }>().data.length;
    const form = await t.app.inject({
      method: 'POST',
      url: '/api/v1/tasks',
      headers: { cookie: `baton_session=${secret}`, origin: 'https://evil.example', 'content-type': 'application/x-www-form-urlencoded', 'idempotency-key': 'k1' },
      payload: 'title=pwned',
    });
    expect(form.statusCode).toBe(403);
    expect(JSON.parse(form.body)).toMatchObject({ code: 'csrf_failed' });
    const fetchLike = await withCookie(secret, 'POST', '/api/v1/tasks', { body: { title: 'pwned' }, headers: { origin: 'https://evil.example' } });
    expect(fetchLike.status).toBe(403);
    expect(fetchLike.json()).toMatchObject({ code: 'csrf_failed' });
    // A token from another session does not pass either.
    const other = await signIn('csrf-other');
    const stolen = await csrf(other.secret);
    const crossed = await withCookie(secret, 'POST', '/api/v1/tasks', { body: { title: 'pwned' }, headers: { 'x-csrf-token': stolen.token, cookie: stolen.cookie } });
    expect(crossed.json()).toMatchObject({ code: 'csrf_failed' });
    // GraphQL and MCP writes are cookie writes too.
    const graphql = await withCookie(secret, 'POST', '/graphql', { body: { query: 'mutation { tasks_create(input: {title: "pwned"}) { id } }' } });
    expect(graphql.status).toBe(403);
    expect((await t.request('GET', '/api/v1/tasks?limit=100')).json<{ data: unknown[] }>().data.length).toBe(before);
  });

  it('writes with the CSRF token the app reads from GET /auth/session', async () => {
    const { secret } = await signIn('csrf-ok');
    const { token, cookie } = await csrf(secret);
    const made = await withCookie(secret, 'POST', '/api/v1/tasks', { body: { title: 'Made with a session' }, headers: { 'x-csrf-token': token, cookie } });
    expect(made.status).toBe(201);
  });

  it('leaves bearer-token requests unchanged, even with a stray session cookie', async () => {
    const { secret } = await signIn('bearer-too');
    const res = await t.request('POST', '/api/v1/tasks', { body: { title: 'By bearer' }, headers: { cookie: `baton_session=${secret}`, origin: 'https://evil.example' } });
    expect(res.status).toBe(201);
  });

  it('ends after the idle timeout, and at the absolute timeout however busy', async () => {
    const idle = await signIn('idle');
    offsetMs += 3599_000;
    expect((await withCookie(idle.secret, 'GET', '/api/v1/whoami')).status).toBe(200);
    offsetMs += 3599_000;
    // Seen an hour ago less a second: still alive.
    expect((await withCookie(idle.secret, 'GET', '/api/v1/whoami')).status).toBe(200);
    offsetMs += 3601_000;
    const gone = await withCookie(idle.secret, 'GET', '/api/v1/whoami');
    expect(gone.status).toBe(401);
    expect(gone.json()).toMatchObject({ code: 'invalid_token' });

    const busy = await signIn('busy');
    for (let i = 0; i < 8; i++) {
      offsetMs += 3000_000;
      const res = await withCookie(busy.secret, 'GET', '/api/v1/whoami');
      // 8 h absolute: the 9th step (after 8 × 50 min = 6 h 40 min) still answers; past 8 h it does not.
      expect(res.status, `after ${(i + 1) * 50} min`).toBe(200);
    }
    offsetMs += 3000_000 * 2;
    expect((await withCookie(busy.secret, 'GET', '/api/v1/whoami')).status).toBe(401);
  });

  it('cannot be renewed past a timeout by switching workspace (a stolen cookie would live for ever)', async () => {
    const idle = await signIn('renew-idle');
    const idleCsrf = await csrf(idle.secret);
    offsetMs += 3601_000;
    const afterIdle = await withCookie(idle.secret, 'POST', '/auth/workspace', { body: { workspace_id: idle.workspaceId }, headers: { 'x-csrf-token': idleCsrf.token, cookie: idleCsrf.cookie } });
    expect(afterIdle.status, afterIdle.body).toBe(401);
    expect(afterIdle.json()).toMatchObject({ code: 'invalid_token' });

    const busy = await signIn('renew-busy');
    const busyCsrf = await csrf(busy.secret);
    for (let i = 0; i < 10; i++) {
      offsetMs += 3000_000;
      await withCookie(busy.secret, 'GET', '/api/v1/whoami');
    }
    const afterAbsolute = await withCookie(busy.secret, 'POST', '/auth/workspace', { body: { workspace_id: busy.workspaceId }, headers: { 'x-csrf-token': busyCsrf.token, cookie: busyCsrf.cookie } });
    expect(afterAbsolute.status, afterAbsolute.body).toBe(401);
    expect(afterAbsolute.cookies.find((c) => c.name === 'baton_session')).toBeUndefined();
  });

  it('signs out on the server: the cookie stops working everywhere, and the timeline says who', async () => {
    const { secret, sessionId, agentId } = await signIn('leaver');
    const { token, cookie } = await csrf(secret);
    const out = await withCookie(secret, 'POST', '/auth/logout', { headers: { 'x-csrf-token': token, cookie } });
    expect(out.status).toBe(204);
    expect((await withCookie(secret, 'GET', '/api/v1/whoami')).status).toBe(401);
    const events = await t.request('GET', `/api/v1/events?types=session.signed_in,session.signed_out&limit=100`);
    const mine = events.json<{ data: { type: string; subject: string; actor: { id: string } }[] }>().data.filter((e) => e.subject === sessionId);
    expect(mine.map((e) => [e.type, e.actor.id])).toEqual([
      ['session.signed_in', agentId],
      ['session.signed_out', agentId],
    ]);
  });

  it('lists a person\'s sessions with device and last seen; they revoke one, an admin ends anyone\'s, another member cannot', async () => {
    const first = await signIn('many');
    const second = await signIn('many');
    const list = await withCookie(first.secret, 'GET', '/api/v1/sessions');
    const rows = list.json<{ data: { id: string; device: string; current: boolean; last_seen_at: string }[] }>().data;
    expect(rows.map((r) => r.id).sort()).toEqual([first.sessionId, second.sessionId].sort());
    expect(rows.find((r) => r.id === first.sessionId)).toMatchObject({ device: 'Chrome on Linux', current: true });

    const { token, cookie } = await csrf(first.secret);
    const revoked = await withCookie(first.secret, 'DELETE', `/api/v1/sessions/${second.sessionId}`, { headers: { 'x-csrf-token': token, cookie } });
    expect(revoked.status).toBe(200);
    expect((await withCookie(second.secret, 'GET', '/api/v1/whoami')).status).toBe(401);

    const stranger = await signIn('stranger');
    const { token: st, cookie: sc } = await csrf(stranger.secret);
    const refused = await withCookie(stranger.secret, 'DELETE', `/api/v1/sessions/${first.sessionId}`, { headers: { 'x-csrf-token': st, cookie: sc } });
    expect(refused.status).toBe(404);
    expect((await withCookie(stranger.secret, 'GET', `/api/v1/sessions?agent_id=${first.agentId}`)).status).toBe(404);

    const byAdmin = await t.request('GET', `/api/v1/sessions?agent_id=${first.agentId}`);
    expect(byAdmin.json<{ data: { id: string }[] }>().data.map((r) => r.id)).toEqual([first.sessionId]);
    expect((await t.request('DELETE', `/api/v1/sessions/${first.sessionId}`)).status).toBe(200);
    expect((await withCookie(first.secret, 'GET', '/api/v1/whoami')).status).toBe(401);
    const events = await t.request('GET', `/api/v1/events?types=session.revoked&limit=100`);
    expect(events.json<{ data: { subject: string }[] }>().data.map((e) => e.subject)).toEqual(expect.arrayContaining([first.sessionId, second.sessionId]));
  });

  it('refuses a disabled person at their next request', async () => {
    const { secret, agentId } = await signIn('soon-disabled');
    expect((await withCookie(secret, 'GET', '/api/v1/whoami')).status).toBe(200);
    expect((await t.request('PATCH', `/api/v1/agents/${agentId}`, { body: { disabled: true } })).status).toBe(200);
    expect((await withCookie(secret, 'GET', '/api/v1/whoami')).status).toBe(401);
    await expect(signIn('soon-disabled')).rejects.toMatchObject({ code: 'sign_in_failed' });
  });
});

describe('roles', () => {
  it('maps the role claim on first sign-in; an admin changes a role, which applies to live sessions at once', async () => {
    const t2 = await startTestServer({
      oidc: { issuer: 'https://idp.example', clientId: 'baton', clientSecret: 's', name: 'IdP', roleClaim: 'groups', roleMap: [['baton-viewers', 'viewer'], ['baton-admins', 'admin']], defaultRole: 'member', required: false },
    });
    try {
      const service = t2.server.service;
      const viewer = await service.signIn({ issuer: 'https://idp.example', subject: 'v', name: 'Vera', email: null, emailVerified: false, roleValues: ['staff', 'baton-viewers'] }, CHROME);
      const cookie = { cookie: `baton_session=${viewer.secret}` };
      const me = await t2.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: cookie });
      expect(me.json<{ scopes: string[] }>().scopes).toEqual(['tasks:read', 'events:read']);
      const agent = await t2.request('GET', `/api/v1/agents/${viewer.agentId}`);
      expect(agent.json()).toMatchObject({ role: 'viewer', kind: 'human', name: 'Vera' });

      const changed = await t2.request('POST', `/api/v1/agents/${viewer.agentId}/role`, { body: { role: 'member' } });
      expect(changed.status).toBe(200);
      expect(changed.json()).toMatchObject({ role: 'member' });
      const after = await t2.app.inject({ method: 'GET', url: '/api/v1/whoami', headers: cookie });
      expect(after.json<{ scopes: string[] }>().scopes).toContain('tasks:write');
      // Polled: on the shared test PostgreSQL another database's open transaction can hold an event back from the list for a moment.
      const changes = async () => (await t2.request('GET', `/api/v1/events?types=agent.role_changed`)).json<{ data: { subject: string; data: { from: string; to: string } }[] }>().data;
      await expect.poll(async () => (await changes()).map((e) => [e.subject, e.data.from, e.data.to]), { timeout: 15_000 }).toEqual([[viewer.agentId, 'viewer', 'member']]);

      // Only an owner makes an owner: an admin (by role) is refused, the bootstrap owner is not.
      const admin = await service.signIn({ issuer: 'https://idp.example', subject: 'a', name: 'Ada', email: null, emailVerified: false, roleValues: ['baton-admins'] }, CHROME);
      const adminMe = await t2.app.inject({ method: 'GET', url: '/api/v1/agents/' + admin.agentId, headers: { authorization: `Bearer ${t2.adminToken}` } });
      expect(JSON.parse(adminMe.body)).toMatchObject({ role: 'admin' });
      const session = await t2.app.inject({ method: 'GET', url: '/auth/session', headers: { cookie: `baton_session=${admin.secret}` } });
      const csrfCookie = session.cookies.find((c) => c.name === 'baton_csrf');
      const byAdmin = await t2.app.inject({
        method: 'POST',
        url: `/api/v1/agents/${viewer.agentId}/role`,
        headers: { cookie: `baton_session=${admin.secret}; baton_csrf=${csrfCookie?.value}`, 'x-csrf-token': session.json<{ csrf_token: string }>().csrf_token, 'idempotency-key': 'r1', 'content-type': 'application/json' },
        payload: JSON.stringify({ role: 'owner' }),
      });
      expect(byAdmin.statusCode).toBe(403);
      expect(JSON.parse(byAdmin.body)).toMatchObject({ code: 'owner_required' });
      expect((await t2.request('POST', `/api/v1/agents/${viewer.agentId}/role`, { body: { role: 'owner' } })).json()).toMatchObject({ role: 'owner' });
    } finally {
      await t2.close();
    }
  });

  it('with BATON_OIDC_REQUIRED, refuses a human\'s bearer token but not an agent\'s nor the bootstrap owner\'s', async () => {
    const t3 = await startTestServer({
      oidc: { issuer: 'https://idp.example', clientId: 'baton', clientSecret: 's', name: 'IdP', roleClaim: 'groups', roleMap: [], defaultRole: 'member', required: true },
    });
    try {
      const human = await t3.addPrincipal({ kind: 'human', scopes: ['tasks:read'] });
      const bot = await t3.addPrincipal({ kind: 'agent', scopes: ['tasks:read'] });
      // addPrincipal's tokens are made by the system; a human's own token is made by an admin.
      const minted = await t3.request('POST', `/api/v1/agents/${human.id}/tokens`, { body: { machine: 'laptop' } });
      const humanToken = minted.json<{ token: string }>().token;
      const refused = await t3.request('GET', '/api/v1/whoami', { token: humanToken });
      expect(refused.status).toBe(401);
      expect(refused.json<{ detail: string }>().detail).toMatch(/single sign-on/);
      expect((await t3.request('GET', '/api/v1/whoami', { token: bot.token })).status).toBe(200);
      expect((await t3.request('GET', '/api/v1/whoami')).status).toBe(200);
      expect((await t3.app.inject({ method: 'GET', url: '/auth/session' })).json()).toMatchObject({ oidc: { name: 'IdP', required: true }, session: null });
    } finally {
      await t3.close();
    }
  });
});
