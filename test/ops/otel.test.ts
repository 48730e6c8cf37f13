import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startTracing, tracingOff } from '../../src/tracing.ts';
import { freshDatabase, startTestServer, type TestServer } from '../harness.ts';
import { pollUntil } from '../leases/instances.ts';
import { type Receiver, startReceiver } from '../realtime/receiver.ts';

/** One span as OTLP/JSON carries it (ExportTraceServiceRequest → resourceSpans → scopeSpans → spans). */
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: { stringValue?: string; intValue?: string | number } }[];
  events?: { name: string }[];
  links?: { traceId: string; spanId: string }[];
}
interface OtlpRequest {
  resourceSpans: { resource: { attributes: OtlpSpan['attributes'] }; scopeSpans: { spans: OtlpSpan[] }[] }[];
}

const KIND = { internal: 1, server: 2, client: 3 };

/** A real OTLP/HTTP receiver: takes POST /v1/traces with OTLP/JSON bodies and keeps what it decodes. */
async function startCollector(): Promise<{ url: string; requests: OtlpRequest[]; protobuf: Buffer[]; headers: IncomingHttpHeaders[]; spans: () => OtlpSpan[]; close: () => Promise<void> }> {
  const requests: OtlpRequest[] = [];
  const protobuf: Buffer[] = [];
  const headers: IncomingHttpHeaders[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const type = String(request.headers['content-type']);
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !/^application\/(json|x-protobuf)/.test(type)) {
        response.writeHead(400).end();
        return;
      }
      headers.push(request.headers);
      if (type.startsWith('application/x-protobuf')) protobuf.push(Buffer.concat(chunks));
      else requests.push(JSON.parse(Buffer.concat(chunks).toString('utf8')) as OtlpRequest);
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    protobuf,
    headers,
    spans: () => requests.flatMap((r) => r.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans))),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function attribute(span: OtlpSpan | undefined, key: string): string | number | undefined {
  const value = span?.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? (value?.intValue === undefined ? undefined : Number(value.intValue));
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';
const HEARTBEAT_TRACE_ID = '5cf92f3577b34da6a3ce929d0e0e4737';

describe('OpenTelemetry tracing, exported over OTLP/HTTP', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let hooks: Receiver;
  let t: TestServer;
  let delivered: Receiver['deliveries'][number];

  beforeAll(async () => {
    collector = await startCollector();
    hooks = await startReceiver();
    // The standard variables, parsed as at start; the test starts tracing first so the database it opens traces its statements.
    const tracingConfig = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'baton-under-test' }).tracing;
    const tracing = await startTracing(tracingConfig, 'test');
    const { database } = await freshDatabase(undefined, tracing.query);
    t = await startTestServer({ tracing: tracingConfig, webhookIntervalMs: 200 }, { database, tracing });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });

    const hook = await t.request('POST', '/api/v1/webhooks', { body: { url: `${hooks.url}/traced`, event_types: ['task.created'] } });
    expect(hook.status, hook.body).toBe(201);
    hooks.trust('/traced', hook.json<{ secret: string }>().secret);

    // SSE: connect, take the first frame, leave.
    const abort = new AbortController();
    const stream = await fetch(`${base}/api/v1/events/stream?types=task.created`, { headers: { authorization: `Bearer ${t.adminToken}` }, signal: abort.signal });
    expect(stream.status).toBe(200);

    const created = await t.request('POST', '/api/v1/tasks', { body: { title: 'traced' }, headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } });
    expect(created.status, created.body).toBe(201);

    const reader = stream.body?.getReader();
    let text = '';
    while (reader && !text.includes('event: task.created')) text += new TextDecoder().decode((await reader.read()).value);
    abort.abort();

    // A heartbeat runs in a group's transaction (src/service/write-groups.ts).
    const claimed = await t.request('POST', '/api/v1/tasks/claim', { body: {} });
    expect(claimed.status, claimed.body).toBe(200);
    const leaseId = claimed.json<{ lease?: { id: string }; claims?: { lease: { id: string } }[] }>();
    const beat = await t.request('POST', `/api/v1/leases/${leaseId.lease?.id ?? leaseId.claims?.[0]?.lease.id}/heartbeat`, { body: {}, headers: { traceparent: `00-${HEARTBEAT_TRACE_ID}-${PARENT_ID}-01` } });
    expect(beat.status, beat.body).toBe(200);

    const mcp = await t.app.inject({
      method: 'POST',
      url: '/mcp',
      headers: { authorization: `Bearer ${t.adminToken}`, accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'whoami', arguments: {} } },
    });
    expect(mcp.statusCode, mcp.body).toBe(200);
    const graphql = await t.request('POST', '/graphql', { body: { query: 'query Me { whoami { scopes } }' } });
    expect(graphql.status, graphql.body).toBe(200);

    delivered = await pollUntil(async () => hooks.deliveries.find((d) => d.path === '/traced'), 15_000, 'the webhook delivery');
    // Closing flushes the exporter: every span has reached the collector when it resolves.
    await t.close();
  }, 60_000);

  afterAll(async () => {
    await hooks.close();
    await collector.close();
  });

  it('exports over OTLP/JSON with the service name of OTEL_SERVICE_NAME', () => {
    expect(collector.requests.length).toBeGreaterThan(0);
    const resource = collector.requests[0]?.resourceSpans[0]?.resource;
    expect(resource?.attributes?.find((a) => a.key === 'service.name')?.value.stringValue).toBe('baton-under-test');
  });

  it('continues the trace of an incoming traceparent in the REST server span, with statements as its children', () => {
    const spans = collector.spans();
    const server = spans.find((s) => s.name === 'POST /api/v1/tasks');
    expect(server?.kind).toBe(KIND.server);
    expect(server?.traceId).toBe(TRACE_ID);
    expect(server?.parentSpanId).toBe(PARENT_ID);
    expect(attribute(server, 'http.route')).toBe('/api/v1/tasks');
    expect(attribute(server, 'http.response.status_code')).toBe(201);
    expect(attribute(server, 'baton.operation')).toBe('tasks_create');
    const statements = spans.filter((s) => s.parentSpanId === server?.spanId && attribute(s, 'db.system.name') === 'postgresql');
    expect(statements.map((s) => s.name)).toContain('INSERT');
    expect(statements.every((s) => s.kind === KIND.client && s.traceId === TRACE_ID && typeof attribute(s, 'db.query.text') === 'string')).toBe(true);
  });

  it('runs a group of heartbeats in a span of its own, linked to each heartbeat, with the statements as its children', () => {
    const spans = collector.spans();
    const server = spans.find((s) => s.kind === KIND.server && attribute(s, 'baton.operation') === 'leases_heartbeat');
    expect(server?.traceId).toBe(HEARTBEAT_TRACE_ID);
    const group = spans.find((s) => s.name === 'leases_heartbeat group' && s.links?.some((l) => l.spanId === server?.spanId));
    expect(group?.kind).toBe(KIND.internal);
    expect(group?.parentSpanId ?? '').toBe('');
    expect(group?.links).toEqual([expect.objectContaining({ traceId: HEARTBEAT_TRACE_ID, spanId: server?.spanId })]);
    expect(attribute(group, 'baton.group.calls')).toBe(1);
    const statements = spans.filter((s) => s.parentSpanId === group?.spanId).map((s) => s.name);
    // The transaction is the group's (binding, key claim, lock, renewal, store): the request's own span keeps only its authentication.
    expect(statements.filter((name) => name !== 'BEGIN' && name !== 'COMMIT')).toEqual(['SELECT', 'SELECT', 'SELECT', 'WITH', 'WITH']);
    expect(spans.filter((s) => s.parentSpanId === server?.spanId).map((s) => s.name)).toEqual(['WITH']);
  });

  it('has a span per MCP tool call and per GraphQL operation, inside their HTTP spans', () => {
    const spans = collector.spans();
    const tool = spans.find((s) => s.name === 'tools/call whoami');
    expect(attribute(tool, 'gen_ai.tool.name')).toBe('whoami');
    expect(spans.find((s) => s.spanId === tool?.parentSpanId)?.name).toBe('POST /mcp');
    const operation = spans.find((s) => s.name === 'query Me');
    expect(attribute(operation, 'graphql.operation.type')).toBe('query');
    expect(spans.find((s) => s.spanId === operation?.parentSpanId)?.name).toBe('POST /graphql');
    expect(spans.some((s) => s.parentSpanId === operation?.spanId && s.name === 'SELECT')).toBe(true);
  });

  it('traces an SSE stream: a span for the connect, an event per frame on the stream span', () => {
    const spans = collector.spans();
    const stream = spans.find((s) => s.name === 'GET /api/v1/events/stream');
    expect(stream?.events?.map((e) => e.name)).toContain('sse.frame');
    expect(spans.find((s) => s.name === 'sse connect events_stream')?.parentSpanId).toBe(stream?.spanId);
  });

  it('sends the delivery span in the traceparent of an outbound webhook', () => {
    const traceparent = String(delivered.headers.traceparent);
    expect(traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const [, traceId, spanId] = traceparent.split('-');
    const delivery = collector.spans().find((s) => s.name === 'webhook deliver' && s.spanId === spanId);
    expect(delivery?.kind).toBe(KIND.client);
    expect(delivery?.traceId).toBe(traceId);
    expect(attribute(delivery, 'http.response.status_code')).toBe(200);
    expect(delivered.verified).toBe(true);
  });
});

describe('OpenTelemetry over http/protobuf (the default protocol)', () => {
  it('exports protobuf to <OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces, with the configured headers', async () => {
    const collector = await startCollector();
    try {
      const tracing = await startTracing(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: `${collector.url}/`, OTEL_EXPORTER_OTLP_HEADERS: 'x-tenant=blue' }).tracing, 'test');
      await tracing.inSpan('a protobuf span', 'internal', {}, async () => undefined);
      await tracing.shutdown();
      expect(collector.protobuf).toHaveLength(1);
      // Protobuf carries strings as UTF-8 bytes: the span's name is in the body.
      expect(collector.protobuf[0]?.includes('a protobuf span')).toBe(true);
      expect(collector.headers[0]?.['x-tenant']).toBe('blue');
    } finally {
      await collector.close();
    }
  });
});

describe('OpenTelemetry off', () => {
  it('is off without OTEL_* variables, and OTEL_SDK_DISABLED=true turns it off whatever else is set', () => {
    expect(loadConfig({}).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeUndefined();
    expect(loadConfig({ OTEL_TRACES_EXPORTER: 'otlp' }).tracing?.url).toBe('http://localhost:4318/v1/traces');
    expect(loadConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/custom', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc,x-tenant=1' }).tracing).toMatchObject({
      url: 'http://collector:4318/custom',
      protocol: 'http/protobuf',
      headers: { authorization: 'Bearer abc', 'x-tenant': '1' },
    });
  });

  it('loads no SDK module when off: tracing is the shared no-op', async () => {
    expect(await startTracing(undefined, 'test')).toBe(tracingOff);
  });

  it('sends nothing when disabled, even with an endpoint set', async () => {
    const collector = await startCollector();
    try {
      const tracing = loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_SDK_DISABLED: 'true' }).tracing;
      const t = await startTestServer({ tracing });
      expect(t.server.service.tracing.enabled).toBe(false);
      expect((await t.request('POST', '/api/v1/tasks', { body: { title: 'untraced' }, headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } })).status).toBe(201);
      await t.close();
      expect(collector.requests).toEqual([]);
    } finally {
      await collector.close();
    }
  });
});
