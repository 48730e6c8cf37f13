import { EventSource, type FetchLike } from 'eventsource';

/** One event as an SSE client received it. */
export interface Received {
  readonly id: string;
  readonly event: string;
  readonly data: { id: string; type: string; subject: string };
}

export interface Subscription {
  readonly received: Received[];
  /** How many times the client (re)opened the stream. */
  opens: number;
  /** Resolves once `count` events have arrived (rejects after `boundMs`). */
  waitFor(count: number, boundMs: number): Promise<void>;
  /** Resolves with the HTTP status that made the client give up for good (rejects after `boundMs`). */
  waitClosed(boundMs: number): Promise<number | undefined>;
  close(): void;
}

/**
 * Opens a real EventSource client (the `eventsource` package) with a bearer token. `cutAfterBytes`
 * makes the connection fail once each time that many more bytes have arrived (the bytes before the cut still arrive), so the client
 * reconnects on its own, sending Last-Event-ID as any EventSource does.
 */
export function subscribe(url: string, token: string, types: readonly string[], options: { cutAfterBytes?: number } = {}): Promise<Subscription> {
  const withToken: FetchLike = async (input, init) => {
    const res = await fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${token}` } });
    const cut = options.cutAfterBytes;
    if (!cut || !res.body) return res;
    const reader = res.body.getReader();
    let bytes = 0;
    return {
      url: res.url,
      status: res.status,
      redirected: res.redirected,
      headers: res.headers,
      body: {
        getReader: () => ({
          // As a dropped connection does: the bytes up to the cut arrive, then the read fails.
          // (Failing the whole chunk instead could drop the same replayed frames on every reconnect.)
          async read() {
            if (bytes >= cut) {
              await reader.cancel();
              throw new Error('cut by the test');
            }
            const chunk = await reader.read();
            const value = chunk.value as Uint8Array | undefined;
            if (!value) return chunk;
            const kept = value.subarray(0, cut - bytes);
            bytes += kept.byteLength;
            return { done: false, value: kept };
          },
          cancel: () => reader.cancel(),
        }),
      },
    };
  };
  const source = new EventSource(url, { fetch: withToken });
  const received: Received[] = [];
  const waiters: (() => void)[] = [];
  let closedWith: ((code: number | undefined) => void) | undefined;
  const closed = new Promise<number | undefined>((resolve) => (closedWith = resolve));
  const subscription: Subscription = {
    received,
    opens: 0,
    waitFor(count, boundMs) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${received.length} of ${count} events within ${boundMs} ms`)), boundMs);
        const check = () => {
          if (received.length < count) return false;
          clearTimeout(timer);
          resolve();
          return true;
        };
        if (!check()) waiters.push(() => void check());
      });
    },
    waitClosed: (boundMs) =>
      Promise.race([closed, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the client was still open after ${boundMs} ms`)), boundMs).unref())]),
    close: () => source.close(),
  };
  const onMessage = (message: MessageEvent) => {
    received.push({ id: message.lastEventId, event: message.type, data: JSON.parse(String(message.data)) as Received['data'] });
    for (const waiter of waiters) waiter();
  };
  for (const type of types) source.addEventListener(type, onMessage);
  return new Promise((resolve, reject) => {
    source.onopen = () => {
      subscription.opens++;
      resolve(subscription);
    };
    source.onerror = (error) => {
      if (source.readyState === EventSource.CLOSED) closedWith?.(error.code);
      if (subscription.opens === 0) {
        source.close();
        reject(new Error(`the stream did not open: ${error.message ?? String(error.code)}`));
      }
    };
  });
}
