import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inputLimits } from '../../src/adapters/limits-table.ts';
import { DELIVERY_ATTEMPTS_MAX, loadConfig } from '../../src/config.ts';
import { OPERATIONS_MAX } from '../../src/operations/define-operation.ts';
import { operations } from '../../src/operations/index.ts';
import { TASK_ARTIFACTS_MAX } from '../../src/operations/tasks/task-schema.ts';
import { startTestServer, type Response, type TestServer } from '../harness.ts';
import { fetchDocument, type OpenApiDocument, type OpenApiOperation } from '../openapi/openapi-document.ts';
import { expectProblem } from '../rest/fixtures.ts';

/**
 * Every bound on a request, at its maximum and one past it. The per-field bounds come from the
 * OpenAPI document (the registry's schemas), so a new field is covered the day it is added.
 */
const BODY_LIMIT = 64 * 1024;
const ARTIFACT_LIMIT = 3000;

let t: TestServer;
let document: OpenApiDocument;
beforeAll(async () => {
  t = await startTestServer({ bodyLimitBytes: BODY_LIMIT, artifactMaxBytes: ARTIFACT_LIMIT });
  document = await fetchDocument(t);
});
afterAll(() => t.close());

const NAMES = new Set(operations.map((op) => op.name));
/** Inputs whose bound is not in their schema, and where it is instead. */
const BOUNDED_ELSEWHERE: Record<string, string> = {
  'artifacts_create body content': 'BATON_ARTIFACT_MAX_BYTES, decoded (the test below)',
};

type Schema = { type?: string | string[]; pattern?: string; format?: string; enum?: unknown[]; maxLength?: number; maxItems?: number; maximum?: number; items?: Schema; properties?: Record<string, Schema>; anyOf?: Schema[] };

function registryOperations(): { method: string; path: string; op: OpenApiOperation }[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, op]) => NAMES.has(op.operationId))
      .map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

describe('every input has a documented maximum', () => {
  it('in the OpenAPI document: no string, list or number of any operation is unbounded', () => {
    const unbounded = registryOperations().flatMap(({ op }) =>
      inputLimits(op, document.components.schemas)
        .filter((limit) => limit.bound.includes('unbounded') && !BOUNDED_ELSEWHERE[`${op.operationId} ${limit.location} ${limit.name}`])
        .map((limit) => `${op.operationId} ${limit.location} ${limit.name}`),
    );
    expect(unbounded).toEqual([]);
  });

  it('in the served spec: api.md lists every operation with inputs and each of its bounded inputs', async () => {
    const page = (await t.request('GET', '/spec/api.md', { token: null })).body;
    expect(page).not.toContain('<!-- generated:limits -->');
    for (const { op } of registryOperations()) {
      const limits = inputLimits(op, document.components.schemas);
      if (limits.length === 0) continue;
      const row = page.split('\n').find((line) => line.startsWith(`| \`${op.operationId}\` | `) && line.includes(': '));
      expect(row, op.operationId).toBeDefined();
      for (const limit of limits) expect(row, `${op.operationId} ${limit.name}`).toContain(`${limit.location} \`${limit.name}\`: ${limit.bound}`);
    }
  });

  it('every list in every answer has a maximum, and the registry fits the operation-list bound', () => {
    const unbounded: string[] = [];
    const walk = (schema: Schema | undefined, where: string) => {
      if (!schema) return;
      if ([schema.type].flat().includes('array') && schema.maxItems === undefined) unbounded.push(where);
      for (const s of schema.anyOf ?? []) walk(s, where);
      walk(schema.items, `${where}[]`);
      for (const [name, s] of Object.entries(schema.properties ?? {})) walk(s, `${where}.${name}`);
    };
    for (const { op } of registryOperations()) {
      for (const [status, response] of Object.entries(op.responses)) walk(response.content?.['application/json']?.schema as Schema | undefined, `${op.operationId} ${status} `);
    }
    expect(unbounded).toEqual([]);
    expect(operations.length).toBeLessThanOrEqual(OPERATIONS_MAX);
  });

  it('a webhook retry schedule of 20 attempts is taken, 21 refused at start', () => {
    const schedule = (n: number) => Array.from({ length: n }, () => '1').join(',');
    expect(loadConfig({ BATON_WEBHOOK_RETRY_SCHEDULE: schedule(DELIVERY_ATTEMPTS_MAX) }).webhookRetryScheduleMs).toHaveLength(DELIVERY_ATTEMPTS_MAX);
    expect(() => loadConfig({ BATON_WEBHOOK_RETRY_SCHEDULE: schedule(DELIVERY_ATTEMPTS_MAX + 1) })).toThrow(/BATON_WEBHOOK_RETRY_SCHEDULE/);
  });

  it('every list answer is a page of at most 100', () => {
    for (const { op } of registryOperations()) {
      const schema = op.responses['200']?.content?.['application/json']?.schema as { properties?: Record<string, Schema> } | undefined;
      if (schema?.properties?.next_cursor) expect(schema.properties.data?.maxItems, op.operationId).toBe(100);
    }
  });
});

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** A well-formed id no row has, distinct for each `n`. */
const idFor = (prefix: string, n: number) => `${prefix}_0${n.toString(32).toUpperCase().padStart(25, '0').replace(/[ILOU]/g, (c) => CROCKFORD[c.charCodeAt(0) % 32] ?? 'Z')}`;

/** A value of this schema that is valid but for its size, `size` long (characters, items or value). */
function sized(schema: Schema, size: number, salt = 0): unknown {
  if (schema.type === 'array') return Array.from({ length: size }, (_, i) => item(schema.items ?? {}, i + salt * 1000));
  if (schema.type === 'integer' || schema.type === 'number') return size;
  if (schema.format === 'uri') return `http://127.0.0.1/${'a'.repeat(size - 17)}`;
  return 'a'.repeat(size);
}

/** The i-th distinct valid-looking item of a list. */
function item(schema: Schema, i: number): unknown {
  if (schema.enum) return schema.enum[i % schema.enum.length];
  const prefix = /^\^(\w+)_\[0-7\]/.exec(schema.pattern ?? '')?.[1];
  if (prefix) return idFor(prefix, i);
  return `l${i}`;
}

interface Fault {
  status: number;
  code: string;
  details: string[];
}

/** What the server said about one input: the problem's code and its errors' details at that pointer. */
function faultAt(res: Response, pointer: string): Fault {
  if (res.status < 400) return { status: res.status, code: '', details: [] };
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const problem = res.json<{ code: string; errors?: { pointer: string; detail: string }[] }>();
  return { status: res.status, code: problem.code, details: (problem.errors ?? []).filter((e) => e.pointer === pointer).map((e) => e.detail) };
}

describe('each bound at its maximum and one past it', () => {
  it('every bounded parameter and body field of every operation', async () => {
    const checked: string[] = [];
    for (const { method, path, op } of registryOperations()) {
      const stream = Object.values(op.responses).some((r) => r.content?.['text/event-stream']);
      const url = path.replace(/\{(\w+)\}/g, () => idFor('zzz', 1));
      const body = Object.entries((op.requestBody?.content['application/json']?.schema as Schema | undefined)?.properties ?? {});
      const fields: { location: string; name: string; schema: Schema; inList?: boolean }[] = [
        // Headers are read by one adapter for every operation: the test after this one.
        ...(op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ location: p.in, name: p.name, schema: p.schema as Schema })),
        ...body.map(([name, schema]) => ({ location: 'body', name, schema })),
        // The items of a list, each bounded too: sent as a list of one.
        ...body.filter(([, schema]) => schema.items?.maxLength !== undefined).map(([name, schema]) => ({ location: 'body', name, schema: schema.items ?? {}, inList: true })),
      ];
      for (const field of fields) {
        const nullable = field.schema.anyOf?.find((s) => s.type !== 'null') ?? field.schema;
        // A nullable value stated as one schema (`type: ["number", "null"]`) is sized as its other type.
        const schema = Array.isArray(nullable.type) ? { ...nullable, type: nullable.type.find((type) => type !== 'null') } : nullable;
        const max = schema.maxLength ?? schema.maxItems ?? schema.maximum;
        if (max === undefined) continue;
        const send = async (size: number) => {
          const value = sized(schema, size);
          const text = typeof value === 'string' ? value : String(value);
          // `wait` at its longest would wait a minute for nothing: with work to claim (made just now,
          // as an earlier claim_next may have taken all), it answers at once.
          const answerAtOnce = op.operationId === 'wait' ? '&work=yes' : '';
          if (answerAtOnce) await t.request('POST', '/api/v1/tasks', { body: { title: 'claimable' } });
          if (field.location === 'query') return t.request(method, `${url.replace(/\{\w+\}/g, '')}?${field.name}=${encodeURIComponent(text)}${answerAtOnce}`);
          return t.request(method, url, { body: { [field.name]: field.inList ? [value] : value } });
        };
        const pointer = field.inList ? `/${field.name}/0` : `/${field.name}`;
        const where = `${op.operationId} ${field.location} ${pointer} (max ${max})`;
        const past = faultAt(await send(max + 1), pointer);
        expect(past.status, where).toBe(400);
        expect(past.details.length, `${where}: one past is refused naming the field`).toBeGreaterThan(0);
        if (stream) {
          checked.push(`${where}: past only (a stream)`);
          continue;
        }
        const at = faultAt(await send(max), pointer);
        expect(at.status, where).toBeLessThan(500);
        // At the maximum the field may still be wrong in another way (an unknown id, a format), never for its size.
        expect(past.details.filter((d) => !at.details.includes(d)), `${where}: at the maximum, no complaint that one past has`).not.toEqual([]);
        checked.push(where);
      }
    }
    console.log(`[limits] ${checked.length} bounds checked at their maximum and one past it`);
    expect(checked.length).toBeGreaterThanOrEqual(80);
  }, 120_000);

  it('Idempotency-Key: 255 characters taken, 256 refused; If-Match and If-None-Match: 256 taken, 257 refused', async () => {
    const key = (n: number) => 'k'.repeat(n);
    expect((await t.request('POST', '/api/v1/tasks', { body: { title: 'keyed' }, key: key(255) })).status).toBe(201);
    expectProblem(await t.request('POST', '/api/v1/tasks', { body: { title: 'keyed' }, key: key(256) }), 400, 'idempotency_key_required');
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'tagged' } })).json<{ id: string; version: number }>();
    // The current tag and a long one: still an entity-tag list, so the bound is all that can refuse it.
    const tag = (n: number) => `"${task.version}", "${'y'.repeat(n - String(task.version).length - 6)}"`;
    expect(tag(256)).toHaveLength(256);
    expect((await t.request('GET', `/api/v1/tasks/${task.id}`, { headers: { 'if-none-match': tag(256) } })).status).toBe(304);
    expectProblem(await t.request('GET', `/api/v1/tasks/${task.id}`, { headers: { 'if-none-match': tag(257) } }), 400, 'invalid_precondition');
    const ifMatch = (n: number) => `"${'9'.repeat(n - 2)}"`;
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'retitled' }, ifMatch: ifMatch(256) }), 409, 'conflict_version');
    expectProblem(await t.request('PATCH', `/api/v1/tasks/${task.id}`, { body: { title: 'retitled' }, ifMatch: ifMatch(257) }), 400, 'invalid_precondition');
  });

  it(`the request body: ${BODY_LIMIT} bytes taken, one more refused with 413`, async () => {
    const body = (size: number) => {
      const json = JSON.stringify({ title: 'sized body' });
      return json + ' '.repeat(size - Buffer.byteLength(json));
    };
    expect((await t.request('POST', '/api/v1/tasks', { payload: body(BODY_LIMIT) })).status).toBe(201);
    expectProblem(await t.request('POST', '/api/v1/tasks', { payload: body(BODY_LIMIT + 1) }), 413, 'payload_too_large');
  });

  it(`an artifact: ${ARTIFACT_LIMIT} bytes taken, one more refused with 413`, async () => {
    expect((await t.request('POST', '/api/v1/artifacts', { body: { content: 'b'.repeat(ARTIFACT_LIMIT) } })).status).toBe(201);
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'b'.repeat(ARTIFACT_LIMIT + 1) } }), 413, 'payload_too_large');
  });

  it(`a task's artifacts: ${TASK_ARTIFACTS_MAX} attached, one more refused with 409 conflict_state`, async () => {
    const task = (await t.request('POST', '/api/v1/tasks', { body: { title: 'many artifacts' } })).json<{ id: string }>();
    for (let i = 0; i < TASK_ARTIFACTS_MAX; i += 1) {
      expect((await t.request('POST', '/api/v1/artifacts', { body: { content: `part ${i}`, task_id: task.id } })).status).toBe(201);
    }
    expectProblem(await t.request('POST', '/api/v1/artifacts', { body: { content: 'one more', task_id: task.id } }), 409, 'conflict_state');
    const read = await t.request('GET', `/api/v1/tasks/${task.id}?fields=artifacts`);
    expect(read.json<{ artifacts: unknown[] }>().artifacts).toHaveLength(TASK_ARTIFACTS_MAX);
  }, 60_000);

  it('a path parameter: 100 characters reach validation, 101 are 414', async () => {
    const at = expectProblem(await t.request('GET', `/api/v1/tasks/tsk_${'A'.repeat(96)}`), 400, 'invalid_parameter');
    expect(at.errors).toEqual([expect.objectContaining({ pointer: '/id', location: 'path' })]);
    expectProblem(await t.request('GET', `/api/v1/tasks/tsk_${'A'.repeat(97)}`), 414, 'uri_too_long');
  });

  it('the request line and headers: 16,383 bytes of target, header names and values taken, one more is 431', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const address = t.app.server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const status = (head: string) =>
      new Promise<number>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.end(head));
        let data = '';
        socket.on('data', (chunk: Buffer) => (data += chunk.toString('latin1')));
        socket.on('error', reject);
        socket.on('close', () => resolve(Number(data.split(' ')[1])));
      });
    // Node counts the request target and each header's name and value, not the separators.
    const head = (counted: number) => {
      const fixed = '/healthz'.length + 'Host'.length + 'x'.length + 'X-Filler'.length;
      return `GET /healthz HTTP/1.1\r\nHost: x\r\nX-Filler: ${'a'.repeat(counted - fixed)}\r\n\r\n`;
    };
    expect(await status(head(16_383))).toBe(200);
    expect(await status(head(16_384))).toBe(431);
  });
});
