import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

/** The web app's JavaScript budget (issue 43): every script the app's page loads, gzipped, at most 100 KB. */
const BUDGET = 100 * 1024;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

it('keeps the app’s JavaScript within 100 KB gzipped', async () => {
  const html = (await t.app.inject({ method: 'GET', url: '/' })).body;
  const scripts = [...html.matchAll(/<(?:script|link)[^>]+(?:src|href)="(\/assets\/[^"]+\.js)"/g)].map((m) => m[1] ?? '');
  expect(scripts.length).toBeGreaterThan(0);
  let total = 0;
  for (const script of scripts) {
    const body = (await t.app.inject({ method: 'GET', url: script })).rawPayload;
    // The build the tests make is the one served: production JSX, without each element's source location.
    expect(body.toString('utf8')).not.toContain('lineNumber:');
    total += gzipSync(body, { level: 9 }).length;
  }
  expect(total).toBeLessThanOrEqual(BUDGET);
});
