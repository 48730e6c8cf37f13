import Stripe from 'stripe';
import { Webhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../harness.ts';
import { graphql } from '../graphql/client.ts';
import { connectV2, listen, problemOf } from '../mcp/clients.ts';
import { countRows, createTask, expectProblem } from '../rest/fixtures.ts';

const STRIPE_SECRET = 'whsec_test_payments_secret_0123456789';
const AUTH_SECRET = `whsec_${Buffer.from('auth-secret-for-text-tests-0123').toString('base64')}`;

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ stripeWebhookSecret: STRIPE_SECRET, authWebhookSecret: AUTH_SECRET, sweepIntervalMs: 0 });
});
afterAll(() => t.close());

/** Text no field accepts: a NUL, and lone surrogates of both halves. */
const BAD = [
  ['NUL', 'a\u0000b'],
  ['lone high surrogate', 'a\ud800b'],
  ['lone low surrogate', '\udc00'],
] as const;

interface FieldError {
  pointer: string;
  detail: string;
  location: string;
}

let baseUrl: string | undefined;

describe('NUL characters and lone surrogates are refused at validation, naming the field', () => {
  it.each(BAD)('REST: %s in a task title, description, label and in an agent name', async (_name, text) => {
    const before = await countRows(t);
    for (const [url, body, pointer] of [
      ['/api/v1/tasks', { title: text }, '/title'],
      ['/api/v1/tasks', { title: 'ok', description: text }, '/description'],
      ['/api/v1/tasks', { title: 'ok', labels: ['fine', text] }, '/labels/1'],
      ['/api/v1/agents', { name: text, kind: 'agent', scopes: ['tasks:read'] }, '/name'],
      ['/api/v1/tasks', { title: 'ok', [text]: 1 }, `/${text}`],
    ] as const) {
      const problem = expectProblem(await t.request('POST', url, { body }), 400, 'validation_failed');
      expect(problem.retryable).toBe(false);
      expect(problem.errors as FieldError[]).toContainEqual(expect.objectContaining({ pointer, location: 'body' }));
    }
    expect(await countRows(t)).toEqual(before);
  });

  it('REST: a NUL in a query filter and a path parameter is 400 invalid_parameter', async () => {
    // Percent-decoding yields U+FFFD for invalid UTF-8, so only a NUL can reach a query or path as such.
    const problem = expectProblem(await t.request('GET', `/api/v1/tasks?labels=${encodeURIComponent('\u0000')}`), 400, 'invalid_parameter');
    expect((problem.errors as FieldError[])[0]).toMatchObject({ pointer: '/labels', location: 'query' });
    expectProblem(await t.request('GET', `/api/v1/events?subject=x${encodeURIComponent('\u0000')}`), 400, 'invalid_parameter');
    const path = expectProblem(await t.request('GET', '/api/v1/tasks/tsk_%00'), 400, 'invalid_parameter');
    expect((path.errors as FieldError[])[0]).toMatchObject({ pointer: '/id', location: 'path' });
  });

  it('GraphQL: a NUL in idempotency_key is refused, not stored', async () => {
    // HTTP itself refuses NUL in headers; MCP and GraphQL carry the key as an argument (below).
    const res = await graphql(t, 'mutation ($key: String) { createTask(title: "x", idempotency_key: $key) { id } }', { variables: { key: 'k\u0000' } });
    expect(res.errors?.[0]?.extensions.code).toBe('idempotency_key_required');
  });

  it.each(BAD)('GraphQL: %s in a variable and in an inline string', async (_name, text) => {
    const before = await countRows(t);
    const viaVariable = await graphql(t, 'mutation ($title: String!) { createTask(title: $title) { id } }', { variables: { title: text } });
    expect(viaVariable.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed', status: 400, retryable: false });
    const task = await createTask(t);
    const update = await graphql(t, 'mutation ($d: String) { updateTask(id: "' + task.id + '", description: $d) { id } }', { variables: { d: text } });
    expect(update.errors?.[0]?.extensions).toMatchObject({ code: 'validation_failed' });
    const list = await graphql(t, 'query ($l: String) { tasks(labels: $l) { data { id } } }', { variables: { l: text } });
    expect(list.errors?.[0]?.extensions).toMatchObject({ code: 'invalid_parameter', retryable: false });
    expect((await countRows(t)).tasks).toBe(before.tasks + 1);
  });

  it.each(BAD)('MCP: %s in a tool argument', async (_name, text) => {
    baseUrl ??= await listen(t);
    const client = await connectV2(baseUrl, t.adminToken, 'modern');
    try {
      const { tools } = await client.listTools();
      const create = tools.find((tool) => /^tasks[._]create$/.test(tool.name))?.name ?? 'tasks_create';
      const problem = problemOf((await client.callTool({ name: create, arguments: { title: 'ok', description: text } })));
      expect(problem).toMatchObject({ code: 'validation_failed', status: 400, retryable: false });
      expect(problem.errors as FieldError[]).toContainEqual(expect.objectContaining({ pointer: '/description' }));
      const keyed = problemOf((await client.callTool({ name: create, arguments: { title: 'ok', idempotency_key: text } })));
      expect(keyed).toMatchObject({ code: 'idempotency_key_required', retryable: false });
    } finally {
      await client.close();
    }
  });
});

describe('inbound payloads with NUL or lone surrogates are refused with a 400 that records nothing', () => {
  it.each(BAD)('payments: %s in the event object', async (_name, text) => {
    const before = await countRows(t);
    const body = JSON.stringify({ id: 'evt_text_1', object: 'event', type: 'customer.updated', data: { object: { id: 'cus_1', name: text } } });
    const header = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET });
    const res = await t.request('POST', '/webhooks/payments', { payload: body, headers: { 'stripe-signature': header }, token: null, key: null });
    const problem = expectProblem(res, 400, 'validation_failed');
    expect(problem.retryable).toBe(false);
    expect(await countRows(t)).toEqual(before);
  });

  it.each(BAD)('auth: %s in a user name', async (_name, text) => {
    const before = await countRows(t);
    const body = JSON.stringify({ type: 'user.created', data: { id: 'user_text', first_name: text } });
    const id = `msg_text_${body.length}`;
    const timestamp = new Date();
    const signature = new Webhook(AUTH_SECRET).sign(id, timestamp, body);
    const headers = { 'svix-id': id, 'svix-timestamp': String(Math.floor(timestamp.getTime() / 1000)), 'svix-signature': signature };
    const problem = expectProblem(await t.request('POST', '/webhooks/auth', { payload: body, headers, token: null, key: null }), 400, 'validation_failed');
    expect(problem.retryable).toBe(false);
    expect(await countRows(t)).toEqual(before);
  });
});
