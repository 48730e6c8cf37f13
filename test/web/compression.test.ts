import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

/*
 * The web app's scripts and styles go out compressed (brotli or gzip) to a browser that asks, from
 * the build this project's setup made, with their caching and security headers unchanged.
 */

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.close());

async function get(url: string, acceptEncoding?: string) {
  const res = await t.app.inject({ method: 'GET', url, headers: acceptEncoding ? { 'accept-encoding': acceptEncoding } : {} });
  return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload };
}

it('serves the app’s JavaScript as brotli or gzip when asked and as identity otherwise, with its headers', async () => {
  const page = await get('/', 'gzip, deflate, br, zstd');
  expect(page.status).toBe(200);
  expect(page.headers['content-security-policy']).toMatch(/script-src 'self'/);
  const html = page.headers['content-encoding'] === 'br' ? brotliDecompressSync(page.bytes).toString('utf8') : page.bytes.toString('utf8');
  const script = /<script[^>]+src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  expect(script).toBeDefined();

  const plain = await get(script ?? '');
  expect(plain.status).toBe(200);
  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(plain.bytes.length).toBeGreaterThan(10_000);

  const br = await get(script ?? '', 'gzip, deflate, br, zstd');
  expect(br.headers['content-encoding']).toBe('br');
  expect(br.headers['content-type']).toMatch(/javascript/);
  expect(br.headers['cache-control']).toMatch(/immutable/);
  expect(br.headers['x-content-type-options']).toBe('nosniff');
  expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2);
  expect(brotliDecompressSync(br.bytes).equals(plain.bytes)).toBe(true);

  const gzip = await get(script ?? '', 'gzip');
  expect(gzip.headers['content-encoding']).toBe('gzip');
  expect(gunzipSync(gzip.bytes).equals(plain.bytes)).toBe(true);
});
