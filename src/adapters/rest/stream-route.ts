import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { StreamOperation } from '../../operations/define-operation.ts';
import { authenticateRequest } from '../authenticate-request.ts';
import type { Service } from '../../service/service.ts';

/** The reconnect delay EventSource clients are told once, in ms (DESIGN §6). */
const RETRY_MS = 3000;
/** A comment line this often keeps proxies and load balancers from closing an idle stream. */
const PING_MS = 15_000;
/** The route's open streams are pinged in this many turns per PING_MS, not all 10,000 in one. */
const PING_SLOTS = 15;
/** A client whose socket takes no bytes for this long is dropped; it resumes with Last-Event-ID. */
const SLOW_CLIENT_MS = 30_000;

/**
 * Serves a stream operation as Server-Sent Events: `retry:` once, then one `id:`/`event:`/`data:`
 * frame per item, and a `: ping` comment every 15 s. `Last-Event-ID` (sent by reconnecting clients)
 * becomes the operation's `since`, over any `since` in the query. Errors before the first frame are
 * ordinary problem+json answers; this adapter only writes frames.
 */
export function registerStreamRoute(app: FastifyInstance, service: Service, operation: StreamOperation<z.ZodObject, z.ZodType>, url: string): void {
  // An item many streams share (the tail's shared events) is framed, serialised and encoded once, for all of them.
  const framed = new WeakMap<object, Buffer>();
  const text = (item: z.output<typeof operation.output>): Buffer => {
    const { id, event } = operation.frameOf(item);
    return Buffer.from(`id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(item)}\n\n`);
  };
  const frame = (item: z.output<typeof operation.output>): Buffer => {
    if (typeof item !== 'object' || item === null) return text(item);
    let made = framed.get(item);
    if (made === undefined) framed.set(item, (made = text(item)));
    return made;
  };
  const pings = pinger();
  // A Buffer, not a string: Node then writes the head it holds (a string of ~35 joined pieces) on its
  // own, which flattens it, rather than joined to a string first write, which leaves every open
  // stream holding the pieces (~1.1 KB).
  const retry = Buffer.from(`retry: ${RETRY_MS}\n\n`);
  app.get(url, async (request, reply) => {
    const { principal } = await authenticateRequest(service, request, reply, operation.name);
    const stop = new AbortController();
    // The request's span lasts as long as the stream, with an event per frame; connecting (the
    // checks and the replay's first read) is a child span of its own.
    const { tracing } = service;
    const span = tracing.activeSpan();
    const items = await tracing.inSpan(`sse connect ${operation.name}`, 'internal', { 'baton.operation': operation.name }, () =>
      service.subscribe(operation, streamInput(request), { principal, stop }),
    );
    reply.hijack();
    const res = reply.raw;
    // Not chunked: the stream ends when its connection does (`connection: close`), so a frame is one
    // write rather than a chunk's size, the frame and a CRLF.
    res.removeHeader('transfer-encoding');
    res.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string | number | string[]>),
      'x-request-id': request.id,
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'close',
    });
    res.write(retry);
    const traced = span
      ? (item: z.output<typeof operation.output>) => {
          const { id, event } = operation.frameOf(item);
          span.addEvent('sse.frame', { 'baton.event.id': id, 'baton.event.type': event });
        }
      : undefined;
    sendFrames(res, items[Symbol.asyncIterator](), { stop, frame, traced, unping: pings.add(res), log: request.log, about: { operation: operation.name, principal: principal.id } });
  });
}

/** What `sendFrames` needs of its stream besides the response and the items. */
interface FrameSending<T> {
  readonly stop: AbortController;
  readonly frame: (item: T) => Buffer;
  /** Records each item on the request's span, when traced. */
  readonly traced: ((item: T) => void) | undefined;
  readonly unping: () => void;
  readonly log: FastifyBaseLogger;
  /** What its log lines name. */
  readonly about: { readonly operation: string; readonly principal: string };
}

/**
 * Writes `items` to `res` as frames until they end, the client goes (which aborts `stop`) or stops
 * reading. It runs on the items' promises, and the route's handler returns before: an idle stream
 * holds these few closures and its pending read, not a suspended handler with every variable of its
 * own (the request's principal among them).
 */
function sendFrames<T>(res: ServerResponse, items: AsyncIterator<T>, sending: FrameSending<T>): void {
  const { stop } = sending;
  res.on('close', () => stop.abort());
  // The frames of one batch of the tail come within one tick: gathered until the next, they leave as
  // one chunk in one write, not a chunk (and its system calls) each.
  let gathered: Buffer[] = [];
  const flush = () => {
    const chunk = gathered.length === 1 ? gathered[0] : Buffer.concat(gathered);
    gathered = [];
    if (chunk && !res.destroyed) res.write(chunk);
  };
  const finish = () => {
    flush();
    sending.unping();
    stop.abort();
    res.end();
  };
  const onItem = (read: IteratorResult<T>): void => {
    if (read.done) return finish();
    try {
      sending.traced?.(read.value);
      if (gathered.length === 0) process.nextTick(flush);
      gathered.push(sending.frame(read.value));
    } catch (err) {
      // Not a promise's unhandled rejection: the stream ends as when its items fail.
      void items.return?.();
      return onError(err);
    }
    // A socket that took the last chunk only into its buffer (`writableNeedDrain`) is waited for.
    if (!res.writableNeedDrain) return next();
    void drained(res, stop.signal).then((ok) => {
      if (ok) return next();
      sending.log.info(sending.about, 'dropped a stream client that stopped reading');
      res.destroy();
      void items.return?.();
      finish();
    });
  };
  const onError = (err: unknown): void => {
    sending.log.error({ err, operation: sending.about.operation }, 'stream failed; the client resumes with Last-Event-ID');
    finish();
  };
  const next = (): void => void items.next().then(onItem, onError);
  next();
}

/** The query's input, `Last-Event-ID` (sent by reconnecting clients) over any `since` in it. */
function streamInput(request: FastifyRequest): Record<string, unknown> {
  const lastEventId = request.headers['last-event-id'];
  return { ...(request.query as Record<string, unknown>), ...(typeof lastEventId === 'string' && lastEventId !== '' ? { since: lastEventId } : {}) };
}

/** True once the socket drains; false if it does not within SLOW_CLIENT_MS or the client leaves. */
function drained(res: ServerResponse, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      res.off('drain', onDrain);
      signal.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onDrain = () => finish(true);
    const onAbort = () => finish(false);
    const timer = setTimeout(() => finish(false), SLOW_CLIENT_MS);
    res.on('drain', onDrain);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One timer for all of a route's open streams, in place of one per stream. A stream joins the slot
 * just pinged, so its first ping comes 14-15 s after it opens and one every PING_MS after that; each
 * tick pings one slot. The timer runs only while a stream is open.
 */
function pinger(): { add(res: ServerResponse): () => void } {
  const slots = Array.from({ length: PING_SLOTS }, () => new Set<ServerResponse>());
  let open = 0;
  let next = 0;
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    for (const res of slots[next] ?? []) res.write(': ping\n\n');
    next = (next + 1) % PING_SLOTS;
  };
  return {
    add(res) {
      const slot = slots[(next + PING_SLOTS - 1) % PING_SLOTS];
      slot?.add(res);
      open++;
      timer ??= setInterval(tick, PING_MS / PING_SLOTS);
      return () => {
        if (!slot?.delete(res)) return;
        if (--open > 0) return;
        clearInterval(timer);
        timer = undefined;
      };
    },
  };
}
