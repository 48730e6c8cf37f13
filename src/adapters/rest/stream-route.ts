import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
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
    res.on('close', () => stop.abort());
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
    const unping = pings.add(res);
    // From here the stream runs on its items' promises and the handler returns: an idle stream holds
    // its pending read and these few closures, not a suspended handler with every variable of its own.
    const iterator = items[Symbol.asyncIterator]();
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
      unping();
      stop.abort();
      res.end();
    };
    const onItem = (read: IteratorResult<z.output<typeof operation.output>>): void => {
      if (read.done) return finish();
      if (span) {
        const { id, event } = operation.frameOf(read.value);
        span.addEvent('sse.frame', { 'baton.event.id': id, 'baton.event.type': event });
      }
      if (gathered.length === 0) process.nextTick(flush);
      gathered.push(frame(read.value));
      // A socket that took the last chunk only into its buffer (`writableNeedDrain`) is waited for.
      if (!res.writableNeedDrain) return next();
      void drained(res, stop.signal).then((ok) => {
        if (ok) return next();
        request.log.info({ operation: operation.name, principal: principal.id }, 'dropped a stream client that stopped reading');
        res.destroy();
        void iterator.return?.();
        finish();
      });
    };
    const onError = (err: unknown): void => {
      request.log.error({ err, operation: operation.name }, 'stream failed; the client resumes with Last-Event-ID');
      finish();
    };
    const next = (): void => void iterator.next().then(onItem, onError);
    next();
  });
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
