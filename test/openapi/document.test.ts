import { compileErrors, validate } from '@readme/openapi-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { operations } from '../../src/operations/index.ts';
import { startTestServer, type TestServer } from '../harness.ts';
import { fetchDocument, type OpenApiDocument, schemaCompiler } from './openapi-document.ts';

let t: TestServer;
let document: OpenApiDocument;
beforeAll(async () => {
  t = await startTestServer();
  document = await fetchDocument(t);
});
afterAll(() => t.close());

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

describe('GET /api/v1/openapi.json', () => {
  it('answers JSON without a token', async () => {
    const res = await t.request('GET', '/api/v1/openapi.json', { token: null });
    expect(res.status).toBe(200);
    expect(String(res.headers['content-type'])).toMatch(/^application\/json/);
    expect(document.openapi).toBe('3.1.0');
    expect(document.servers?.[0]?.url).toBe('http://baton.test');
  });

  it('is a valid OpenAPI 3.1 document for @readme/openapi-parser', async () => {
    const result = await validate(structuredClone(document) as never);
    expect(result.valid ? [] : result.errors, result.valid ? '' : compileErrors(result)).toEqual([]);
    expect(result.valid).toBe(true);
    expect(result.specification).toBe('OpenAPI');
    expect(result.warnings).toEqual([]);
  });

  it('is checked by a validator that does reject a broken document', async () => {
    const withoutInfo = structuredClone(document) as { info?: unknown };
    delete withoutInfo.info;
    expect((await validate(withoutInfo as never)).valid).toBe(false);

    const undeclaredPathParameter = structuredClone(document) as unknown as { paths: Record<string, unknown> };
    undeclaredPathParameter.paths['/api/v1/things/{thing_id}'] = { get: { operationId: 'things.get', responses: { 200: { description: 'ok' } } } };
    expect((await validate(undeclaredPathParameter as never)).valid).toBe(false);
  });

  it('has every schema compile under JSON Schema 2020-12, strict', () => {
    const compile = schemaCompiler(document);
    const failures: string[] = [];
    const tryCompile = (path: string[]) => {
      try {
        compile(path);
      } catch (error) {
        failures.push(`${path.join(' ')}: ${(error as Error).message}`);
      }
    };
    for (const name of Object.keys(document.components.schemas)) tryCompile(['components', 'schemas', name]);
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        (op.parameters ?? []).forEach((_, i) => tryCompile(['paths', path, method, 'parameters', String(i), 'schema']));
        for (const type of Object.keys(op.requestBody?.content ?? {})) tryCompile(['paths', path, method, 'requestBody', 'content', type, 'schema']);
        for (const [status, response] of Object.entries(op.responses)) {
          for (const type of Object.keys(response.content ?? {})) tryCompile(['paths', path, method, 'responses', status, 'content', type, 'schema']);
        }
      }
    }
    expect(failures).toEqual([]);
  });
});

describe('the document and the registry', () => {
  it('has every registry operation at its path and method, with its name as operationId', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      expect(entry, `${op.name}: ${op.http.method} /api/v1${op.http.path}`).toBeDefined();
      expect(entry?.operationId).toBe(op.name);
    }
  });

  it('has no operation the registry does not define', () => {
    const documented = Object.values(document.paths).flatMap((item) =>
      Object.entries(item)
        .filter(([method]) => METHODS.includes(method))
        .map(([, op]) => op.operationId),
    );
    // Besides the registry: the routes the service itself serves, documented so a generated client sees them all.
    const service = ['manifest', 'openapi', 'healthz', 'readyz', 'metrics', 'graphql', 'mcp', 'a2a', 'agentCard', 'inboundPayments', 'inboundAuth', 'cronKeepalive'];
    expect(documented.sort()).toEqual([...operations.map((op) => op.name), ...service].sort());
  });

  it('declares each success status with a JSON body (an event stream for streams), and problems as the default', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      const success = entry?.responses[String(op.http.successStatus ?? 200)];
      expect(success?.content?.[op.kind === 'stream' ? 'text/event-stream' : 'application/json']?.schema, op.name).toBeDefined();
      expect(entry?.responses.default?.content?.['application/problem+json']?.schema, op.name).toEqual({ $ref: '#/components/schemas/Problem' });
    }
  });

  it('requires an Idempotency-Key header on every write, and on no read', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      const key = entry?.parameters?.find((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key');
      if (op.kind === 'write') {
        expect(key?.required, op.name).toBe(true);
        expect(key?.schema, op.name).toMatchObject({ type: 'string', maxLength: 255 });
      } else {
        expect(key, op.name).toBeUndefined();
      }
    }
  });

  it('declares every path parameter as required', () => {
    for (const op of operations) {
      const entry = document.paths[`/api/v1${op.http.path}`]?.[op.http.method.toLowerCase()];
      for (const [, name] of op.http.path.matchAll(/\{(\w+)\}/g)) {
        const parameter = entry?.parameters?.find((p) => p.in === 'path' && p.name === name);
        expect(parameter?.required, `${op.name} {${name}}`).toBe(true);
      }
    }
  });
});
