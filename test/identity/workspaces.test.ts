import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { CRON_SECRET, testClock } from '../leases/instances.ts';

/**
 * Workspaces (spec/identity.md "Workspaces"): what one workspace holds is unseen, uncountable and
 * unchangeable from another, through the operations, the workers and a person's sessions. The
 * registry-wide probe of every operation is test/security/cross-workspace.test.ts; the browser
 * flow (sign-in through a real provider, the switcher) is in test/web/sso.test.ts.
 */

const clock = testClock();
let t: TestServer;
/** The owner of a second workspace, "Beta", made by the bootstrap owner. */
let beta: { id: string; token: string; ownerId: string };

interface Page<T> {
  data: T[];
}
interface Workspace {
  id: string;
  name: string;
  current: boolean;
}

beforeAll(async () => {
  t = await startTestServer({ sweepIntervalMs: 0, cronSecret: CRON_SECRET }, { clock });
  const made = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Beta' } });
  expect(made.status, made.body).toBe(201);
  const body = made.json<{ workspace: Workspace; owner_id: string; token: string }>();
  beta = { id: body.workspace.id, token: body.token, ownerId: body.owner_id };
});
afterAll(() => t.close());

async function sweep(): Promise<void> {
  const res = await t.request('POST', '/cron/keepalive', { token: null, headers: { authorization: `Bearer ${CRON_SECRET}` }, key: null });
  expect(res.status, res.body).toBe(200);
}

describe('a workspace', () => {
  it('is made by an owner, who owns it; its owner sees it as current, the maker keeps theirs', async () => {
    const mine = (await t.request('GET', '/api/v1/workspaces')).json<Page<Workspace>>().data;
    expect(mine.filter((w) => w.current).map((w) => w.name)).toEqual(['default']);
    expect(mine.map((w) => w.name)).not.toContain('Beta');
    const theirs = (await t.request('GET', '/api/v1/workspaces', { token: beta.token })).json<Page<Workspace>>().data;
    expect(theirs).toEqual([expect.objectContaining({ id: beta.id, name: 'Beta', current: true })]);
    const me = (await t.request('GET', '/api/v1/agents/' + beta.ownerId, { token: beta.token })).json<{ role: string; kind: string }>();
    expect(me).toMatchObject({ role: 'owner', kind: 'human' });
    // The name is the server's to keep unique; a replay of the creation does not show the token again.
    expect((await t.request('POST', '/api/v1/workspaces', { body: { name: 'Beta' } })).json()).toMatchObject({ code: 'conflict_state' });
    const key = crypto.randomUUID();
    const first = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Gamma' }, key });
    const again = await t.request('POST', '/api/v1/workspaces', { body: { name: 'Gamma' }, key });
    expect(first.json<{ token: string | null }>().token).toMatch(/^bat_/);
    expect(again.json<{ token: string | null }>().token).toBeNull();
  });

  it('holds its own tasks, comments, agents and events: another workspace cannot read, count, change or find them', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'Default-only task', labels: ['secret'] } })).json<{ id: string; version: number }>();
    await t.request('POST', `/api/v1/tasks/${task.id}/comments`, { body: { body: 'a default-only comment' } });
    const theirs = (await t.request('POST', '/api/v1/tasks', { token: beta.token, body: { title: 'Beta-only task' } })).json<{ id: string }>();

    const listed = (await t.request('GET', '/api/v1/tasks?limit=100', { token: beta.token })).json<Page<{ id: string }>>().data.map((x) => x.id);
    expect(listed).toEqual([theirs.id]);
    for (const [method, url, body] of [
      ['GET', `/api/v1/tasks/${task.id}`, undefined],
      ['PATCH', `/api/v1/tasks/${task.id}`, { title: 'taken over' }],
      ['GET', `/api/v1/tasks/${task.id}/comments`, undefined],
      ['POST', `/api/v1/tasks/${task.id}/comments`, { body: 'hello from beta' }],
      ['POST', `/api/v1/tasks/${task.id}/claim`, {}],
    ] as const) {
      const res = await t.request(method, url, { token: beta.token, ...(body ? { body } : {}) });
      expect(res.status, `${method} ${url}: ${res.body}`).toBe(404);
      expect(res.json()).toMatchObject({ code: 'not_found' });
    }
    const search = (await t.request('GET', '/api/v1/tasks?q=Default-only', { token: beta.token })).json<Page<unknown>>().data;
    expect(search).toEqual([]);
    const labelled = (await t.request('GET', '/api/v1/tasks?labels=secret', { token: beta.token })).json<Page<unknown>>().data;
    expect(labelled).toEqual([]);
    const events = (await t.request('GET', '/api/v1/events?limit=100', { token: beta.token })).json<Page<{ subject: string }>>().data;
    expect(events.map((e) => e.subject)).not.toContain(task.id);
    expect(events.map((e) => e.subject)).toContain(theirs.id);
    const agents = (await t.request('GET', '/api/v1/agents?limit=100', { token: beta.token })).json<Page<{ id: string }>>().data.map((a) => a.id);
    expect(agents).toEqual([beta.ownerId]);
    // And the other way round.
    expect((await t.request('GET', `/api/v1/tasks/${theirs.id}`)).status).toBe(404);
    const untouched = (await t.request('GET', `/api/v1/tasks/${task.id}`)).json<{ title: string; version: number }>();
    expect(untouched).toMatchObject({ title: 'Default-only task', version: task.version });
  });

  it('has its workers act in it: a lease lapsing in Beta returns Beta\'s task, with Beta\'s events', async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { token: beta.token, body: { title: 'Lapses in Beta' } })).json<{ id: string }>();
    const claimed = await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { token: beta.token, body: { ttl_s: 60 } });
    expect(claimed.status, claimed.body).toBe(200);
    clock.advance(61_000);
    await sweep();
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { token: beta.token })).json()).toMatchObject({ status: 'todo' });
    const theirs = (await t.request('GET', `/api/v1/events?subject=${task.id}&types=lease.expired`, { token: beta.token })).json<Page<unknown>>().data;
    expect(theirs).toHaveLength(1);
    const ours = (await t.request('GET', '/api/v1/events?types=lease.expired&limit=100')).json<Page<{ subject: string }>>().data;
    expect(ours.map((e) => e.subject)).not.toContain(task.id);
  });

  it('is refused to a person not in it, and to anyone but an owner to create', async () => {
    const member = (await t.request('POST', '/api/v1/agents', { body: { name: 'A member', kind: 'human', role: 'member' } })).json<{ id: string }>();
    const token = (await t.request('POST', `/api/v1/agents/${member.id}/tokens`, { body: { machine: 'desk' } })).json<{ token: string }>().token;
    const refused = await t.request('POST', '/api/v1/workspaces', { token, body: { name: 'Not allowed' } });
    expect(refused.status).toBe(403);
  });
});

describe("a workspace's settings", () => {
  interface Settings {
    escalate_ask_s: number | null;
    escalate_approval_s: number | null;
    escalate_review_s: number | null;
    escalate_to: string[] | null;
    rate_limit: number | null;
    chat_webhook_url: string | null;
    event_retention_days: number | null;
  }
  interface WithSettings {
    settings: Settings;
    effective: Settings;
  }
  const unset: Settings = { escalate_ask_s: null, escalate_approval_s: null, escalate_review_s: null, escalate_to: null, rate_limit: null, chat_webhook_url: null, event_retention_days: null };

  it('are read by its members and changed by its admins only, null resetting one to the server default', async () => {
    // The test server sets no SLA (0: never) and no workspace budget.
    const mine = (await t.request('GET', '/api/v1/workspaces/current')).json<WithSettings>();
    expect(mine).toMatchObject({ settings: unset, effective: { escalate_ask_s: 0, escalate_review_s: 0, escalate_to: ['role:owner', 'role:admin'], rate_limit: null } });
    const changed = await t.request('PATCH', '/api/v1/workspaces/current', { token: beta.token, body: { escalate_review_s: 60, escalate_ask_s: 600, escalate_to: ['role:owner'] } });
    expect(changed.status, changed.body).toBe(200);
    expect(changed.json<WithSettings>()).toMatchObject({ settings: { ...unset, escalate_ask_s: 600, escalate_review_s: 60, escalate_to: ['role:owner'] }, effective: { escalate_ask_s: 600, escalate_approval_s: 0, escalate_review_s: 60 } });
    const reset = (await t.request('PATCH', '/api/v1/workspaces/current', { token: beta.token, body: { escalate_ask_s: null } })).json<WithSettings>();
    expect(reset.settings).toEqual({ ...unset, escalate_review_s: 60, escalate_to: ['role:owner'] });
    expect(reset.effective.escalate_ask_s).toBe(0);
    const unchanged = await t.request('PATCH', '/api/v1/workspaces/current', { token: beta.token, body: {} });
    expect(unchanged.json<WithSettings>().settings).toEqual(reset.settings);
    const events = (await t.request('GET', `/api/v1/events?subject=${beta.id}&types=workspace.updated`, { token: beta.token })).json<Page<{ data: { changed: string[] } }>>().data;
    expect(events.map((e) => e.data.changed)).toEqual([['escalate_ask_s', 'escalate_review_s', 'escalate_to'], ['escalate_ask_s']]);
    // The other workspace is untouched, and sees none of it.
    expect((await t.request('GET', '/api/v1/workspaces/current')).json<WithSettings>().settings).toEqual(unset);
    expect((await t.request('GET', `/api/v1/events?subject=${beta.id}&types=workspace.updated`)).json<Page<unknown>>().data).toEqual([]);
    const invalid = await t.request('PATCH', '/api/v1/workspaces/current', { token: beta.token, body: { escalate_to: ['role:boss'] } });
    expect(invalid.status).toBe(400);

    for (const role of ['member', 'viewer']) {
      const person = (await t.request('POST', '/api/v1/agents', { token: beta.token, body: { name: `Beta ${role}`, kind: 'human', role } })).json<{ id: string }>();
      const token = (await t.request('POST', `/api/v1/agents/${person.id}/tokens`, { token: beta.token, body: { machine: 'desk' } })).json<{ token: string }>().token;
      expect((await t.request('GET', '/api/v1/workspaces/current', { token })).json<WithSettings>().settings.escalate_review_s).toBe(60);
      const refused = await t.request('PATCH', '/api/v1/workspaces/current', { token, body: { escalate_review_s: null } });
      expect(refused.status, `${role}: ${refused.body}`).toBe(403);
    }
  });

  it("escalate a review by the workspace's own SLA, while a workspace on the server default (never) does not", async () => {
    const inReview = async (token: string | undefined, title: string) => {
      const task = (await t.request('POST', '/api/v1/tasks', { ...(token ? { token } : {}), body: { title } })).json<{ id: string }>();
      const held = (await t.request('POST', `/api/v1/tasks/${task.id}/claim`, { ...(token ? { token } : {}), body: {} })).json<{ lease: { epoch: number } }>();
      const handed = await t.request('PATCH', `/api/v1/tasks/${task.id}`, { ...(token ? { token } : {}), body: { status: 'in_review', lease_epoch: held.lease.epoch } });
      expect(handed.status, handed.body).toBe(200);
      return task.id;
    };
    const theirs = await inReview(beta.token, 'Reviewed in Beta');
    const ours = await inReview(undefined, 'Reviewed in default');
    clock.advance(59_000);
    await sweep();
    expect((await t.request('GET', `/api/v1/tasks/${theirs}`, { token: beta.token })).json()).not.toHaveProperty('review_overdue');
    clock.advance(2_000);
    await sweep();
    expect((await t.request('GET', `/api/v1/tasks/${theirs}`, { token: beta.token })).json()).toMatchObject({ review_overdue: true });
    const overdue = (await t.request('GET', `/api/v1/events?types=task.review_overdue&subject=${theirs}`, { token: beta.token })).json<Page<{ data: { sla_s: number; notified: string[] } }>>().data;
    expect(overdue.map((e) => e.data)).toEqual([expect.objectContaining({ sla_s: 60 })]);
    clock.advance(86_400_000);
    await sweep();
    expect((await t.request('GET', `/api/v1/tasks/${ours}`)).json()).not.toHaveProperty('review_overdue');
    expect((await t.request('GET', '/api/v1/events?types=task.review_overdue&limit=100')).json<Page<unknown>>().data).toEqual([]);
  });

  it('share a request budget among all its tokens, independent of another workspace\'s budget', async () => {
    const made = (await t.request('POST', '/api/v1/workspaces', { body: { name: 'Delta' } })).json<{ workspace: Workspace; owner_id: string; token: string }>();
    const second = (await t.request('POST', `/api/v1/agents/${made.owner_id}/tokens`, { token: made.token, body: { machine: 'laptop' } })).json<{ token: string }>().token;
    // At the start of a rate window (BATON_RATE_LIMIT's), so the window does not turn during the test.
    const policy = String((await t.request('GET', '/api/v1/whoami', { token: made.token })).headers['ratelimit-policy']);
    const windowMs = Number(/;w=(\d+)/.exec(policy)?.[1]) * 1000;
    clock.advance(windowMs - (clock.now().getTime() % windowMs));
    expect((await t.request('PATCH', '/api/v1/workspaces/current', { token: made.token, body: { rate_limit: 3 } })).status).toBe(200);
    expect((await t.request('PATCH', '/api/v1/workspaces/current', { body: { rate_limit: 1000 } })).status).toBe(200);
    for (const token of [made.token, second, made.token]) expect((await t.request('GET', '/api/v1/whoami', { token })).status).toBe(200);
    const refused = await t.request('GET', '/api/v1/whoami', { token: second });
    expect(refused.status).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'rate_limited', detail: `Workspace ${made.workspace.id} used its budget of 3 requests in this ${windowMs / 1000} s window, shared by all its tokens; it resets in ${windowMs / 1000} s.` });
    expect(refused.headers['retry-after']).toBe(String(windowMs / 1000));
    // The default workspace's own budget is untouched by Delta's.
    const ours = await t.request('GET', '/api/v1/whoami');
    expect(ours.status).toBe(200);
    expect(ours.headers['ratelimit']).toBe(`"default";r=${1000 - 1};t=${windowMs / 1000}`);
    clock.advance(windowMs);
    expect((await t.request('GET', '/api/v1/whoami', { token: second })).status).toBe(200);
    expect((await t.request('PATCH', '/api/v1/workspaces/current', { body: { rate_limit: null } })).json<WithSettings>().settings.rate_limit).toBeNull();
  });
});

describe('a person in two workspaces', () => {
  const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0';
  const person = { issuer: 'https://idp.example', subject: 'ana', name: 'Ana', email: 'ana@example.com', emailVerified: true, roleValues: [] as string[] };

  async function withCookie(secret: string, method: string, url: string, options: { body?: unknown; csrf?: { token: string; cookie: string } } = {}) {
    const cookie = `baton_session=${secret}${options.csrf ? `; ${options.csrf.cookie}` : ''}`;
    const res = await t.app.inject({
      method: method as 'GET',
      url,
      headers: { cookie, ...(method === 'GET' ? {} : { 'idempotency-key': crypto.randomUUID() }), ...(options.csrf ? { 'x-csrf-token': options.csrf.token } : {}) },
      ...(options.body === undefined ? {} : { payload: options.body as object }),
    });
    return { status: res.statusCode, body: res.body, json: <T = Record<string, unknown>>() => JSON.parse(res.body) as T, cookies: res.cookies };
  }
  async function csrf(secret: string) {
    const res = await withCookie(secret, 'GET', '/auth/session');
    const set = res.cookies.find((c) => c.name === 'baton_csrf');
    if (!set) throw new Error('no CSRF cookie');
    return { token: res.json<{ csrf_token: string }>().csrf_token, cookie: `baton_csrf=${set.value}` };
  }

  it('is invited by email with a role, switches between them, and has that role in each', async () => {
    const first = await t.server.service.signIn(person, CHROME);
    const adminView = (await t.request('GET', '/api/v1/workspaces')).json<Page<Workspace>>().data;
    expect(first.workspaceId).toBe(adminView.find((w) => w.current)?.id);
    // Beta's owner invites Ana as a viewer; her next sign-in takes the invitation up.
    const invited = await t.request('POST', '/api/v1/agents', { token: beta.token, body: { name: 'Ana', kind: 'human', email: 'ANA@example.com', role: 'viewer' } });
    expect(invited.status, invited.body).toBe(201);
    const again = await t.server.service.signIn(person, CHROME);
    const listed = (await withCookie(again.secret, 'GET', '/api/v1/workspaces')).json<Page<Workspace>>().data;
    expect(listed.map((w) => w.name).sort()).toEqual(['Beta', 'default']);
    expect(listed.find((w) => w.current)?.name).toBe('default');

    // In default she is a member and writes; switched to Beta she is a viewer there and does not.
    const made = await withCookie(again.secret, 'POST', '/api/v1/tasks', { body: { title: 'Ana in default' }, csrf: await csrf(again.secret) });
    expect(made.status, made.body).toBe(201);
    clock.advance(1_000);
    const switched = await withCookie(again.secret, 'POST', '/auth/workspace', { body: { workspace_id: beta.id }, csrf: await csrf(again.secret) });
    expect(switched.status, switched.body).toBe(200);
    const secret = switched.cookies.find((c) => c.name === 'baton_session')?.value ?? '';
    expect(secret).not.toBe(again.secret);
    const opened = switched.json<{ session: { id: string } }>().session.id;
    const signedIn = (await withCookie(secret, 'GET', `/api/v1/events?subject=${opened}&types=session.signed_in`)).json<Page<{ data: { switched_from?: string } }>>().data;
    expect(signedIn.map((e) => e.data.switched_from)).toEqual([again.sessionId]);
    expect((await withCookie(again.secret, 'GET', '/api/v1/whoami')).status).toBe(401);
    const me = (await withCookie(secret, 'GET', '/api/v1/whoami')).json<{ principal: { id: string }; scopes: string[] }>();
    expect(me.principal.id).toBe(invited.json<{ id: string }>().id);
    expect(me.scopes).not.toContain('tasks:write');
    const refused = await withCookie(secret, 'POST', '/api/v1/tasks', { body: { title: 'Ana in Beta' }, csrf: await csrf(secret) });
    expect(refused.status).toBe(403);
    const seen = (await withCookie(secret, 'GET', '/api/v1/tasks?limit=100')).json<Page<{ title: string }>>().data.map((x) => x.title);
    expect(seen).not.toContain('Ana in default');
    expect((await withCookie(secret, 'GET', '/api/v1/workspaces')).json<Page<Workspace>>().data.find((w) => w.current)?.name).toBe('Beta');

    // A workspace she is not in is refused the same as one that does not exist.
    const gamma = (await t.request('GET', '/api/v1/workspaces')).json<Page<Workspace>>().data.find((w) => w.name === 'Gamma');
    const outside = await withCookie(secret, 'POST', '/auth/workspace', { body: { workspace_id: gamma?.id ?? 'wsp_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, csrf: await csrf(secret) });
    expect(outside.status).toBe(404);
    expect(outside.json()).toMatchObject({ code: 'workspace_not_found' });
    const made2 = await withCookie(secret, 'POST', '/auth/workspace', { body: { workspace_id: 'wsp_01JZZZZZZZZZZZZZZZZZZZZZZZ' }, csrf: await csrf(secret) });
    expect(made2.json()).toMatchObject({ code: 'workspace_not_found' });
    // She signs in next where she was last.
    expect((await t.server.service.signIn(person, CHROME)).workspaceId).toBe(beta.id);
  });

  it('takes no invitation on an email the provider did not verify', async () => {
    await t.request('POST', '/api/v1/agents', { token: beta.token, body: { name: 'Bo', kind: 'human', email: 'bo@example.com', role: 'admin' } });
    const signed = await t.server.service.signIn({ ...person, subject: 'bo-impostor', name: 'Bo?', email: 'bo@example.com', emailVerified: false }, CHROME);
    const listed = (await withCookie(signed.secret, 'GET', '/api/v1/workspaces')).json<Page<Workspace>>().data.map((w) => w.name);
    expect(listed).toEqual(['default']);
  });
});
