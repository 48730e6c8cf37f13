import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from '../../src/server.ts';
import { freshDatabase, testConfig } from '../harness.ts';

const lines: Record<string, unknown>[] = [];
let server: Server;

beforeAll(async () => {
  const { database } = await freshDatabase();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  server = await createServer(testConfig(), { database, logger: pino({ level: 'info' }, sink) });
});
afterAll(() => server.close());

describe('the request log (BATON_LOG_LEVEL=info)', () => {
  it('writes one line a request, with its request id and principal and without the token', async () => {
    const token = server.bootstrapToken ?? '';
    const res = await server.app.inject({ method: 'GET', url: '/api/v1/tasks/tsk_nope', headers: { authorization: `Bearer ${token}` } });
    await new Promise((resolve) => setImmediate(resolve));
    const requestId = res.headers['x-request-id'];
    const logged = lines.filter((line) => line.reqId === requestId);
    expect(logged).toEqual([
      expect.objectContaining({ level: 30, msg: 'request', method: 'GET', url: '/api/v1/tasks/tsk_nope', status: 400, operation: 'tasks_get', principal_kind: 'human' }),
    ]);
    expect(logged[0]?.principal).toMatch(/^agt_/);
    expect(JSON.stringify(lines)).not.toContain(token);
  });

  it("leaves out a credential carried in the query: an OIDC callback's code, a notification link's token", async () => {
    for (const url of ['/auth/oidc/callback?code=SECRET-CODE-1&state=s', '/tasks/tsk_01JZ00000000000000000000AA?link=SECRET-LINK-2']) {
      const res = await server.app.inject({ method: 'GET', url });
      await new Promise((resolve) => setImmediate(resolve));
      const logged = lines.filter((line) => line.reqId === res.headers['x-request-id']);
      // The request's line, and for a failed sign-in the warning that says why (spec/identity.md): neither carries the credential.
      expect(logged.filter((line) => line.msg === 'request'), url).toHaveLength(1);
      expect(JSON.stringify(logged)).not.toMatch(/SECRET/);
    }
    expect(lines.find((line) => String(line.url).startsWith('/auth/oidc/callback'))?.url).toBe('/auth/oidc/callback?code=…&state=s');
  });
});
