import type { Transport } from './index.ts';
import { BatonProblem } from './problem.ts';
import { SseParserStream } from './sse.ts';

export interface StreamOptions {
  readonly signal?: AbortSignal;
  /** Told each time a connection is open and its events start to arrive: the first, and after each reconnect. */
  readonly onOpen?: () => void;
  /** Told each time the connection drops, before the client waits `delayMs` and reconnects. */
  readonly onReconnect?: (error: unknown, delayMs: number) => void;
}

/** The wait before the first reconnect unless the server's `retry:` says otherwise; doubled per failure up to the cap. */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5000;

/**
 * Yields the `data` of each frame of an SSE route, as parsed JSON, until `signal` aborts. A dropped
 * connection or a server that is restarting (5xx, refused) is retried with Last-Event-ID set to the
 * last frame seen; a problem that is not retryable (401, 403, 404, 422) ends the iteration by
 * throwing it.
 */
export async function* followStream<T>(t: Transport, path: string, input: Record<string, unknown>, options: StreamOptions): AsyncGenerator<T> {
  let lastId: string | undefined = typeof input.since === 'string' ? input.since : undefined;
  const query = { ...input };
  delete query.since;
  if (lastId === undefined) {
    // Starting "now" by the server's clock would lose what happens during a reconnect before the
    // first event arrives; the newest event's id is a fixed starting point instead.
    const newest = (await (await t.send('GET', '/events', { order: 'desc', limit: 1, fields: 'id' }, options.signal ? { signal: options.signal } : {})).json()) as { data: { id: string }[] };
    lastId = newest.data[0]?.id;
  }
  let delay = FIRST_DELAY_MS;
  let serverRetry: number | undefined;
  while (!options.signal?.aborted) {
    try {
      const response = await t.send('GET', path, { ...query, ...(lastId ? { since: lastId } : {}) }, options.signal ? { signal: options.signal } : {});
      if (!response.body) throw new Error('the stream has no body');
      options.onOpen?.();
      const frames = response.body
        .pipeThrough(new TextDecoderStream())
        .pipeThrough(new SseParserStream({ onRetry: (ms) => (serverRetry = ms) }))
        .getReader();
      for (let next = await frames.read(); !next.done; next = await frames.read()) {
        const frame = next.value;
        delay = serverRetry ?? FIRST_DELAY_MS;
        if (frame.id) lastId = frame.id;
        yield JSON.parse(frame.data) as T;
      }
      throw new Error('the server closed the stream');
    } catch (error) {
      if (options.signal?.aborted) return;
      if (isFinal(error)) throw error;
      const wait = Math.min(delay, MAX_DELAY_MS);
      options.onReconnect?.(error, wait);
      await sleep(wait, options.signal);
      delay = Math.min(delay * 2, MAX_DELAY_MS);
    }
  }
}

/** A problem the server will answer again on every retry. */
function isFinal(error: unknown): boolean {
  return error instanceof BatonProblem && error.status < 500 && !error.retryable;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
