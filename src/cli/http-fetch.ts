import type * as Http from 'node:http';
import { createRequire } from 'node:module';
import { Readable } from 'node:stream';
import type { Fetch, FetchResponse } from '../client/index.ts';

/**
 * The command line's way to send the client's requests: node:http (node:https for an https URL),
 * answered as the client reads a fetch Response. The global fetch loads undici, Node's whole
 * HTTP stack, on its first call: about 0.1 s of CPU on the project's 2-core machine, a third of a
 * `baton tasks list` (bench/cli-startup.ts), for a command that sends one plain request or a few.
 * It fails as fetch does, with a TypeError "fetch failed" whose cause is the socket's error (so the
 * exit codes and messages of exit-codes.ts hold), or with an AbortError once its signal aborts.
 * Unlike fetch it asks for no compressed answer (Baton's API sends none unasked) and follows no
 * redirect: a redirect fails as a connection error naming where it points, so the person sets
 * BATON_URL there (fetch would have followed a GET, and turned a POST behind a 301 into a GET).
 */
export const httpFetch: Fetch = (url, init) => {
  // Required rather than imported: an import of node:http reads every export of it, among them
  // the WebSocket class, which loads undici all the same. https.request takes http's arguments.
  const { request } = createRequire(import.meta.url)(url.protocol === 'https:' ? 'node:https' : 'node:http') as typeof Http;
  return new Promise((resolve, reject) => {
    const sent = request(url, { method: init.method, headers: init.headers, ...(init.signal ? { signal: init.signal } : {}) }, (message) => {
      const to = message.headers.location;
      const status = message.statusCode ?? 0;
      if (status < 300 || status >= 400 || to === undefined) return resolve(answer(message));
      message.resume();
      reject(new TypeError('fetch failed', { cause: new Error(`${url.origin} answers ${status}, redirecting to ${new URL(to, url).origin}; set BATON_URL to that address`) }));
    });
    sent.on('error', (error) => reject(init.signal?.aborted ? error : new TypeError('fetch failed', { cause: error })));
    sent.end(init.body);
  });
};

function answer(message: Http.IncomingMessage): FetchResponse {
  const status = message.statusCode ?? 0;
  // An answer without a body is read by no one: drained here, its connection returns to the pool.
  if (status === 204 || status === 304) message.resume();
  const text = async () => {
    let read = '';
    for await (const chunk of message.setEncoding('utf8')) read += chunk as string;
    return read;
  };
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: message.statusMessage ?? '',
    headers: {
      get: (name) => {
        const value = message.headers[name.toLowerCase()];
        return value === undefined ? null : Array.isArray(value) ? value.join(', ') : value;
      },
    },
    get body() {
      return Readable.toWeb(message) as ReadableStream<Uint8Array<ArrayBuffer>>;
    },
    text,
    json: async () => JSON.parse(await text()) as unknown,
  };
}
