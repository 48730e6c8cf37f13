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
});
