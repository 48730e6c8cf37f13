import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/domain/scopes.ts';
import { ERROR_CODES, ERRORS } from '../../src/errors.ts';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, testConfig, type TestServer } from '../harness.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

interface ManifestOperation {
  name: string;
  method: string;
  path: string;
  scope: string | null;
  kind: string;
  allowed?: boolean;
}

interface Manifest {
  version: string;
  auth: { scopes: string[] };
  rate_limits: unknown;
  attempts: { default_max_attempts: number; backoff_s: number[] };
  entities: { name: string }[];
  operations: ManifestOperation[];
  links: { openapi: string };
  you?: { id: string; scopes: string[] };
}

const contentType = (headers: Record<string, unknown>) => String(headers['content-type']);

describe('GET /api/v1 (the capability manifest)', () => {
  it('answers without a token, with version, auth, rate limits, the attempts policy, entities and the OpenAPI link', async () => {
    const res = await t.request('GET', '/api/v1', { token: null });
    expect(res.status).toBe(200);
    expect(contentType(res.headers)).toMatch(/^application\/json/);
    const manifest = res.json<Manifest>();
    expect(manifest.version).toBe('v1');
    expect(manifest.auth.scopes).toEqual([...SCOPES]);
    expect(manifest.rate_limits).toBeTypeOf('object');
    // The server's defaults (BATON_MAX_ATTEMPTS, BATON_RETRY_BACKOFF_S): what a task with max_attempts null gets.
    const { maxAttempts, retryBackoffS } = testConfig();
    expect(manifest.attempts).toMatchObject({ default_max_attempts: maxAttempts, backoff_s: [...retryBackoffS] });
    expect(manifest.entities.map((e) => e.name)).toContain('Task');
    expect(manifest.you).toBeUndefined();
    const openapi = await t.request('GET', manifest.links.openapi, { token: null });
    expect(openapi.status).toBe(200);
    expect(openapi.json()).toMatchObject({ openapi: '3.1.0' });
  });

  it('lists every registry operation with its method, path, scope and kind, and nothing else', async () => {
    const manifest = (await t.request('GET', '/api/v1', { token: null })).json<Manifest>();
    const expected = operations.map((op) => ({ name: op.name, method: op.http.method, path: `/api/v1${op.http.path}`, scope: op.scope, kind: op.kind }));
    expect(manifest.operations.map(({ name, method, path, scope, kind }) => ({ name, method, path, scope, kind }))).toEqual(expected);
    for (const op of manifest.operations) expect(op.allowed, op.name).toBeUndefined();
  });

  it('says, for a restricted token, which operations it may call', async () => {
    const reader = await t.addPrincipal({ scopes: ['tasks:read'] });
    const res = await t.request('GET', '/api/v1?view=full', { token: reader.token });
    expect(res.status).toBe(200);
    const manifest = res.json<Manifest>();
    expect(manifest.you).toMatchObject({ id: reader.id, scopes: ['tasks:read'] });
    expect(manifest.operations.length).toBe(operations.length);
    const humanOnly = new Set(operations.filter((op) => op.humanOnly === true).map((op) => op.name));
    for (const op of manifest.operations) expect(op.allowed, op.name).toBe((op.scope === null || op.scope === 'tasks:read') && !humanOnly.has(op.name));
    expect(manifest.operations.some((op) => op.allowed === false)).toBe(true);
  });

  it('honours the toolAllowlist as well as scopes', async () => {
    const narrow = await t.addPrincipal({ allowlist: ['whoami', 'tasks_get'] });
    const manifest = (await t.request('GET', '/api/v1?view=full', { token: narrow.token })).json<Manifest>();
    for (const op of manifest.operations) expect(op.allowed, op.name).toBe(op.name === 'whoami' || op.name === 'tasks_get');
  });

  it('refuses a malformed token with a 401 problem rather than ignoring it', async () => {
    const res = await t.request('GET', '/api/v1', { token: `bat_${'A'.repeat(36)}` });
    expect(res.status).toBe(401);
    expect(contentType(res.headers)).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'invalid_token', status: 401 });
  });
});

describe('served docs', () => {
  it('serves /spec/index.md as Markdown', async () => {
    const res = await t.request('GET', '/spec/index.md', { token: null });
    expect(res.status).toBe(200);
    expect(contentType(res.headers)).toMatch(/^text\/markdown/);
    expect(res.body.length).toBeGreaterThan(0);
  });

  it('answers an unknown spec page with a 404 problem', async () => {
    const res = await t.request('GET', '/spec/no-such-page.md', { token: null });
    expect(res.status).toBe(404);
    expect(contentType(res.headers)).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 404, code: 'route_not_found' });
  });

  it('serves /errors/conflict_version as Markdown naming its status', async () => {
    const res = await t.request('GET', '/errors/conflict_version', { token: null });
    expect(res.status).toBe(200);
    expect(contentType(res.headers)).toMatch(/^text\/markdown/);
    expect(res.body).toContain('conflict_version');
    expect(res.body).toContain('409');
  });

  it('serves a page for every error code in the catalogue', async () => {
    for (const code of ERROR_CODES) {
      const res = await t.request('GET', `/errors/${code}`, { token: null });
      expect(res.status, code).toBe(200);
      expect(res.body, code).toContain(String(ERRORS[code].status));
    }
  });

  it('answers an unknown error code with a 404 problem', async () => {
    const res = await t.request('GET', '/errors/nope', { token: null });
    expect(res.status).toBe(404);
    expect(contentType(res.headers)).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 404, code: 'route_not_found' });
  });
});

describe('health', () => {
  it('answers /healthz and /readyz with 200 and no token', async () => {
    const health = await t.request('GET', '/healthz', { token: null });
    expect(health.status).toBe(200);
    expect(health.json()).toMatchObject({ status: 'ok' });
    const ready = await t.request('GET', '/readyz', { token: null });
    expect(ready.status).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
  });
});
