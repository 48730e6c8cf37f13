import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Principal, startTestServer, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';

/*
 * Issue 22 item 10: artifact uploads had no concurrency bound (8 concurrent 25 MiB uploads took one
 * process from 0.3 to 1.34 GB). Uploads (bodies past the 1 MiB request limit) are now bounded per
 * instance (503 uploads_busy) and per token (429 too_many_uploads) before their body is read. The
 * memory figure is measured by bench/upload-memory.ts, not here.
 */

const MiB = 1024 * 1024;
/** An upload: a body past the ordinary 1 MiB request limit. */
const BODY = JSON.stringify({ content: randomBytes(1.5 * MiB).toString('base64'), encoding: 'base64' });

let t: TestServer;
let a: Principal;
let b: Principal;
beforeAll(async () => {
  t = await startTestServer({ uploads: { perInstance: 2, perToken: 1 } });
  a = await t.addPrincipal({ kind: 'agent', scopes: ['artifacts:write'] });
  b = await t.addPrincipal({ kind: 'agent', scopes: ['artifacts:write'] });
});
afterAll(() => t.close());

function headers(token: string): Record<string, string> {
  return { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(BODY)), 'idempotency-key': randomUUID() };
}

/** An upload whose body is held back: `reading` resolves once the server has started to read it (past every check before the body), `finish` sends it. */
function heldUpload(token: string) {
  let started: () => void = () => undefined;
  const reading = new Promise<void>((resolve) => (started = resolve));
  const body = new Readable({ read: () => started() });
  const response = t.app.inject({ method: 'POST', url: '/api/v1/artifacts', headers: headers(token), payload: body });
  return {
    reading,
    finish: async () => {
      body.push(BODY);
      body.push(null);
      return response;
    },
  };
}

const upload = (token: string) => t.app.inject({ method: 'POST', url: '/api/v1/artifacts', headers: headers(token), payload: BODY });
const asResponse = (res: Awaited<ReturnType<typeof upload>>) => ({ status: res.statusCode, headers: res.headers, body: res.body, json: <T>() => JSON.parse(res.body) as T });

describe('artifact uploads in progress', () => {
  it('are bounded per token (429) and per instance (503) before the body is read, and the bound frees as they end', async () => {
    const first = heldUpload(a.token);
    await first.reading;
    const sameToken = asResponse(await upload(a.token));
    expectProblem(sameToken, 429, 'too_many_uploads');
    expect(sameToken.headers['retry-after']).toBe('1');
    expect(sameToken.json<{ retryable: boolean }>().retryable).toBe(true);

    const second = heldUpload(b.token);
    await second.reading;
    const busy = asResponse(await upload(t.adminToken));
    expectProblem(busy, 503, 'uploads_busy');
    expect(busy.headers['retry-after']).toBe('1');

    // A body within the ordinary request limit is not an upload: it is never refused for this.
    const small = await t.request('POST', '/api/v1/artifacts', { token: a.token, body: { content: 'short notes' } });
    expect(small.status, small.body).toBe(201);

    expect((await first.finish()).statusCode).toBe(201);
    expect((await second.finish()).statusCode).toBe(201);
    expect((await upload(a.token)).statusCode).toBe(201);
    expect((await upload(t.adminToken)).statusCode).toBe(201);
  });
});
