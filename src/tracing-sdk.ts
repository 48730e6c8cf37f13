import { type Attributes, type Context, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { AlwaysOffSampler, AlwaysOnSampler, BatchSpanProcessor, ParentBasedSampler, type Sampler, type SpanExporter, TraceIdRatioBasedSampler, TracerProvider } from '@opentelemetry/sdk-trace';
import type { TracingConfig } from './config.ts';
import type { SpanKindName, Tracing } from './tracing.ts';

const KINDS: Record<SpanKindName, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL };

/** Longer statement texts are cut: a span carries what identifies the statement, not a page of SQL. */
const STATEMENT_MAX_CHARS = 2048;

/**
 * The SDK behind `Tracing` (loaded only when tracing is on): a tracer provider with a batch span
 * processor and the OTLP/HTTP exporter the protocol names, an AsyncLocalStorage context manager
 * and the W3C trace-context propagator, all owned by this instance (nothing is registered with the
 * API's globals, so two servers in one process keep their traces apart).
 */
export async function startSdkTracing(config: TracingConfig, version: string): Promise<Tracing> {
  const exporter = await otlpExporter(config);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...config.resourceAttributes, 'service.name': config.serviceName, 'service.version': version }),
    sampler: sampler(config),
    spanProcessors: [new BatchSpanProcessor({ exporter })],
  });
  const tracer = provider.getTracer('baton', version);
  const contexts = new AsyncLocalStorageContextManager().enable();
  const propagator = new W3CTraceContextPropagator();

  const start = (name: string, kind: SpanKindName, attributes: Attributes, parent: Context): Span => tracer.startSpan(name, { kind: KINDS[kind], attributes }, parent);
  const failed = (span: Span, error: unknown) => {
    span.recordException(error instanceof Error ? error : String(error));
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  };

  return {
    enabled: true,
    async inSpan(name, kind, attributes, fn) {
      const parent = contexts.active();
      const span = start(name, kind, attributes, parent);
      try {
        return await contexts.with(trace.setSpan(parent, span), () => fn(span));
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
    async inSharedSpan(name, attributes, from, fn) {
      const links = from.flatMap((span) => (span ? [{ context: span.spanContext() }] : []));
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, links, root: true }, ROOT_CONTEXT);
      try {
        return await contexts.with(trace.setSpan(ROOT_CONTEXT, span), fn);
      } catch (error) {
        failed(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
    activeSpan: () => trace.getSpan(contexts.active()),
    inject(headers) {
      propagator.inject(contexts.active(), headers, defaultTextMapSetter);
    },
    startServer(name, headers, attributes) {
      const parent = propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
      const span = start(name, 'server', attributes, parent);
      const active = trace.setSpan(parent, span);
      return { span, run: (fn) => contexts.with(active, fn) };
    },
    query(sql, durationMs, error) {
      const parent = contexts.active();
      if (!trace.getSpan(parent)?.isRecording()) return;
      const now = Date.now();
      const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
      const span = tracer.startSpan(
        operation,
        { kind: SpanKind.CLIENT, startTime: now - durationMs, attributes: { 'db.system.name': 'postgresql', 'db.operation.name': operation, 'db.query.text': sql.slice(0, STATEMENT_MAX_CHARS) } },
        parent,
      );
      if (error !== undefined) failed(span, error);
      span.end(now);
    },
    async shutdown() {
      await provider.shutdown();
      contexts.disable();
    },
  };
}

async function otlpExporter(config: TracingConfig): Promise<SpanExporter> {
  const options = { url: config.url, headers: { ...config.headers }, timeoutMillis: config.timeoutMs };
  if (config.protocol === 'http/json') {
    const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-http');
    return new OTLPTraceExporter(options);
  }
  const { OTLPTraceExporter } = await import('@opentelemetry/exporter-trace-otlp-proto');
  return new OTLPTraceExporter(options);
}

function sampler(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
  }
}
