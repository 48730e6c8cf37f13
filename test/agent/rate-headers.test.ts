import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ bodyLimitBytes: 1024 });
});
afterAll(() => t.close());

const BUDGET = /^"default";r=\d+;t=\d+$/;

describe('every /api/v1 response made with a token carries the RateLimit fields', () => {
  it('the OpenAPI document and the manifest', async () => {
    for (const url of ['/api/v1/openapi.json', '/api/v1']) {
      const res = await t.request('GET', url);
      expect(res.status, url).toBe(200);
      expect(res.headers.ratelimit, url).toMatch(BUDGET);
      expect(res.headers['ratelimit-policy'], url).toMatch(/^"default";q=\d+;w=\d+$/);
    }
    expect((await t.request('GET', '/api/v1/openapi.json', { token: null })).headers.ratelimit).toBeUndefined();
  });

  it('a 400 and a 413 refused before the body was read, each counted once', async () => {
    const before = Number(/r=(\d+)/.exec(String((await t.request('GET', '/api/v1/whoami')).headers.ratelimit))?.[1]);
    const malformed = await t.request('POST', '/api/v1/tasks', { payload: '{"title": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.headers.ratelimit).toMatch(BUDGET);
    expect(Number(/r=(\d+)/.exec(String(malformed.headers.ratelimit))?.[1])).toBe(before - 1);
    const large = await t.request('POST', '/api/v1/tasks', { body: { title: 'x'.repeat(2048) } });
    expect(large.status).toBe(413);
    expect(large.headers.ratelimit).toMatch(BUDGET);
    const unsupported = await t.request('POST', '/api/v1/tasks', { payload: 'title', headers: { 'content-type': 'text/plain' } });
    expect(unsupported.status).toBe(415);
    expect(unsupported.headers.ratelimit).toMatch(BUDGET);
  });

  it('a 404, 405, 414 and a bad path refused by the router before any route ran', async () => {
    for (const [method, url, status] of [
      ['GET', '/api/v1/nothing-here', 404],
      ['PUT', '/api/v1/tasks', 405],
      ['GET', `/api/v1/tasks/tsk_${'A'.repeat(200)}`, 414],
      ['GET', '/api/v1/tasks/%E0%A4%A', 400],
    ] as const) {
      const res = await t.request(method, url);
      expect(res.status, url).toBe(status);
      expect(res.headers.ratelimit, `${method} ${url}`).toMatch(BUDGET);
    }
    const refused = await t.request('GET', '/api/v1/nothing-here', { token: 'bat_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAA000000' });
    expect(refused.headers.ratelimit).toBeUndefined();
  });
});
