import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type Response, type TestServer } from '../harness.ts';
import { expectProblem } from '../rest/fixtures.ts';

let t: TestServer;
let port: number;
beforeAll(async () => {
  t = await startTestServer();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
});
afterAll(() => t.close());

/** A raw HTTP/1.1 exchange over a real socket: what Node's parser refuses never reaches inject(). */
function rawExchange(text: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    let data = '';
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (data += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim();
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body, json: <T>() => JSON.parse(body) as T });
    });
  });
}

/** A request through Node's own client, to a real port. */
function viaHttp(path: string, headers: Record<string, string> = {}): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, headers: { authorization: `Bearer ${t.adminToken}`, ...headers } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, json: <T>() => JSON.parse(body) as T }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('every response with status >= 400 is a problem document', () => {
  it('414: a path parameter past the route limit', async () => {
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks/tsk_${'A'.repeat(500)}`), 414, 'uri_too_long');
    expect(problem.retryable).toBe(false);
  });

  it('431: request headers past the limit', async () => {
    const problem = expectProblem(await viaHttp('/api/v1/tasks', { 'x-filler': 'a'.repeat(20_000) }), 431, 'headers_too_large');
    expect(problem.retryable).toBe(false);
  });

  it('400: bad percent-encoding in the path', async () => {
    expectProblem(await t.request('GET', '/api/v1/tasks/%E0%A4%A'), 400, 'malformed_request');
    expectProblem(await viaHttp('/api/v1/tasks/%zz'), 400, 'malformed_request');
  });

  it('400: a request line that is not HTTP', async () => {
    expectProblem(await rawExchange('GARBAGE\r\n\r\n'), 400, 'malformed_request');
  });

  it('406: a GraphQL subscription over a plain JSON request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/graphql',
      headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json', accept: 'application/json' },
      payload: JSON.stringify({ query: 'subscription { events { id } }' }),
    });
    const problem = expectProblem({ status: res.statusCode, headers: res.headers, body: res.body, json: <T>() => JSON.parse(res.body) as T }, 406, 'not_acceptable');
    expect(problem.hint).toMatch(/text\/event-stream/);
  });

  it('HEAD on a route that speaks JSON-RPC or GraphQL is never a 500 (HEAD /mcp was: Fastify sent the SDK\'s Response as a body)', async () => {
    for (const url of ['/mcp', '/graphql', '/a2a']) {
      const res = await t.app.inject({ method: 'HEAD', url, headers: { authorization: `Bearer ${t.adminToken}`, accept: 'application/json, text/event-stream' } });
      expect(res.statusCode, url).toBeLessThan(500);
    }
  });
});
