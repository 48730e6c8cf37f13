import { request as httpRequest, type IncomingMessage } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';

/*
 * Responses are compressed (brotli or gzip) when the client's Accept-Encoding asks and the body is
 * 1 KB or more; identity otherwise. Streams of server-sent events never are: a compressor would
 * hold frames back until its buffer filled.
 */

let t: TestServer;
let baseUrl: string;
beforeAll(async () => {
  t = await startTestServer();
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(() => t.close());

/** GET `url` in process with raw bytes back, so the test sees exactly what went on the wire. */
async function get(url: string, acceptEncoding?: string): Promise<{ status: number; headers: Record<string, unknown>; bytes: Buffer }> {
  const res = await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${t.adminToken}`, ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) } });
  return { status: res.statusCode, headers: res.headers, bytes: res.rawPayload };
}

describe('compression of API responses', () => {
  it('sends a JSON answer of 1 KB or more as brotli or gzip, as asked, and the same JSON as identity otherwise', async () => {
    const plain = await get('/api/v1');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.bytes.length).toBeGreaterThan(1024);
    const manifest = JSON.parse(plain.bytes.toString('utf8')) as unknown;

    const br = await get('/api/v1', 'gzip, deflate, br');
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers.vary).toMatch(/accept-encoding/i);
    expect(br.headers['content-type']).toMatch(/^application\/json/);
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2);
    expect(JSON.parse(brotliDecompressSync(br.bytes).toString('utf8'))).toEqual(manifest);

    const gzip = await get('/api/v1', 'gzip, deflate');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gzip.bytes).toString('utf8'))).toEqual(manifest);

    expect((await get('/api/v1', 'identity')).headers['content-encoding']).toBeUndefined();
  });

  it('leaves a body under 1 KB uncompressed (a claim or a single task: the CPU would not pay)', async () => {
    const created = await t.request('POST', '/api/v1/tasks', { body: { title: 'small' } });
    expect(created.status).toBe(201);
    const small = await get(`/api/v1/tasks/${created.json<{ id: string }>().id}`, 'gzip, deflate, br');
    expect(small.status).toBe(200);
    expect(small.bytes.length).toBeLessThan(1024);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.bytes.toString('utf8'))).toMatchObject({ title: 'small' });
  });
});

/** Opens `path` on the real port with `headers`; resolves with the response once its headers arrive. */
function open(path: string, headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(new URL(path, baseUrl), { headers: { authorization: `Bearer ${t.adminToken}`, ...headers } }, resolve);
    req.on('error', reject);
    req.end();
  });
}

/** Reads `res` until its text so far matches `pattern`; the connection stays open. */
function readUntil(res: IncomingMessage, pattern: RegExp): Promise<string> {
  let text = '';
  return new Promise((resolve, reject) => {
    const heard = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (!pattern.test(text)) return;
      res.off('data', heard);
      resolve(text);
    };
    res.on('data', heard);
    res.once('end', () => reject(new Error(`the stream ended before ${pattern}:\n${text}`)));
  });
}

describe('streams under Accept-Encoding: gzip, br', () => {
  it('delivers each event frame of /events/stream as it happens, uncompressed, while the stream stays open', async () => {
    const res = await open('/api/v1/events/stream?types=task.created', { accept: 'text/event-stream', 'accept-encoding': 'gzip, deflate, br' });
    try {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
      expect(res.headers['content-encoding']).toBeUndefined();
      await readUntil(res, /^retry: \d+\n\n/);
      // One small frame: a compressor would hold it in its buffer, and this read would never end.
      const created = await t.request('POST', '/api/v1/tasks', { body: { title: 'streamed at once' } });
      const frame = await readUntil(res, new RegExp(`event: task\\.created\\ndata: [^\\n]*"subject":"${created.json<{ id: string }>().id}"`));
      expect(frame).toContain('id: evt_');
    } finally {
      res.destroy();
    }
  });

  it('answers MCP over Streamable HTTP as a stream of events, uncompressed', async () => {
    const res = await fetch(new URL('/mcp', baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'accept-encoding': 'gzip, br' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
    });
    // The SDK answers a request that accepts both with a stream of events (progress could come first).
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('content-encoding')).toBeNull();
    expect(await res.text()).toMatch(/^event: message\ndata: \{[^\n]*"tasks_create"/m);
  });
});
