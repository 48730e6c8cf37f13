import type { IncomingHttpHeaders } from 'node:http';
import type { Attributes, Span } from '@opentelemetry/api';
import type { TracingConfig } from './config.ts';

export type SpanKindName = 'server' | 'client' | 'internal';

/** Hears each database statement once it has run: its text, how long it took, and its error if it failed. */
export type QueryTracer = (sql: string, durationMs: number, error?: unknown) => void;

/** A request's server span, with the context (the span as parent) that request's work runs in. */
export interface ServerSpan {
  readonly span: Span;
  /** Calls `fn` with this span active: what `fn` starts, and awaits, is its child. */
  run(fn: () => void): void;
}

/**
 * One server instance's tracing: the OpenTelemetry SDK's tracer provider, context (an
 * AsyncLocalStorage held here, never registered globally) and W3C trace-context propagator, or
 * nothing at all when tracing is off. Callers start spans only at Baton's own seams (HTTP, MCP,
 * GraphQL, SSE, webhook deliveries, database statements).
 */
export interface Tracing {
  /** False when tracing is off: then every method does nothing and `query` is undefined. */
  readonly enabled: boolean;
  /**
   * Runs `fn` in a new span, the child of the active one (a new trace when there is none), active
   * for everything `fn` awaits; ends it when `fn` settles, a throw marking it failed. `fn` gets
   * the span (undefined when off).
   */
  inSpan<T>(name: string, kind: SpanKindName, attributes: Attributes, fn: (span: Span | undefined) => Promise<T>): Promise<T>;
  /**
   * Runs `fn` in the root span of a new trace, linked to the spans of the requests whose work it
   * does together (a group of heartbeats sharing one transaction): its statements are its children,
   * not any one request's. Ends it as `inSpan` does.
   */
  inSharedSpan<T>(name: string, attributes: Attributes, from: readonly (Span | undefined)[], fn: () => Promise<T>): Promise<T>;
  /** The active span, if any. */
  activeSpan(): Span | undefined;
  /** Adds the active span's W3C `traceparent` (and `tracestate`) to `headers`. */
  inject(headers: Record<string, string>): void;
  /** Starts the server span of an incoming request; its parent is the request's `traceparent`, if valid. */
  startServer(name: string, headers: IncomingHttpHeaders, attributes: Attributes): ServerSpan | undefined;
  /** A span per statement, as a child of the active span (statements outside any span are not traced). */
  readonly query: QueryTracer | undefined;
  /** Exports what is buffered, then stops exporting. */
  shutdown(): Promise<void>;
}

/** Tracing off: no SDK loaded, nothing recorded. */
export const tracingOff: Tracing = Object.freeze<Tracing>({
  enabled: false,
  inSpan: (_name, _kind, _attributes, fn) => fn(undefined),
  inSharedSpan: (_name, _attributes, _from, fn) => fn(),
  activeSpan: () => undefined,
  inject: () => undefined,
  startServer: () => undefined,
  query: undefined,
  shutdown: async () => undefined,
});

/**
 * Tracing as `config` says: off (undefined) costs nothing, not even loading the SDK, which is
 * imported only when tracing is on.
 */
export async function startTracing(config: TracingConfig | undefined, version: string): Promise<Tracing> {
  if (!config) return tracingOff;
  const { startSdkTracing } = await import('./tracing-sdk.ts');
  return startSdkTracing(config, version);
}
