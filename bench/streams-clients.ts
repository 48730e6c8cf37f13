/**
 * One process of SSE clients for bench/streams.ts, started with `fork` (IPC). It receives a
 * `StreamsPlan`, opens one `GET /api/v1/events/stream` per token (raw `node:http`, one socket each,
 * no keep-alive pool, so 10,000 streams cost little here), answers `{ opened }` once all are open,
 * and then timestamps every frame. Latency is read from the frame itself: `Date.now()` at arrival
 * minus the event's `created_at` (the write's clock reading inside its transaction, before the
 * commit; same machine, same clock), counted in 1 ms buckets for the events created inside the
 * window the parent sends. On `{ report: true }` it answers with a `StreamsReport` and exits.
 */
import http from 'node:http';

export type StreamKind = 'agent' | 'human';
/** `slow`: an unfiltered stream that stops reading once its headers arrive (a stalled consumer). */
type ClientKind = StreamKind | 'slow';

export interface StreamsPlan {
  url: string;
  streams: { token: string; kind: ClientKind }[];
  /** Streams being opened at once. */
  concurrency: number;
}

/** Latencies in whole ms: `buckets[ms]` frames, the last bucket holding everything at or past it. */
export interface Histogram {
  buckets: number[];
  count: number;
}

export interface StreamsReport {
  latency: Record<StreamKind, Histogram>;
  /** For the agents' frames in the window: the event's subject (the assigned task) and the arrival, in ms since the epoch. */
  agentFrames: [string, number][];
  /** Frames of events created outside the window (warm-up, drain), not in the histograms. */
  outside: number;
  /** Seconds from opening to the server closing it, per slow stream it closed. */
  slowDropped: number[];
  /** Streams that ended or failed after opening, and why (first few). */
  ended: number;
  failures: string[];
}

const BUCKETS = 10_001;
const CREATED_AT = '"created_at":"';
const SUBJECT = '"subject":"';

async function run(plan: StreamsPlan): Promise<void> {
  const latency: Record<StreamKind, Uint32Array> = { agent: new Uint32Array(BUCKETS), human: new Uint32Array(BUCKETS) };
  let window = { from: Infinity, to: -Infinity };
  let outside = 0;
  const agentFrames: [string, number][] = [];
  const slowDropped: number[] = [];
  let ended = 0;
  let closing = false;
  const failures: string[] = [];
  const requests: http.ClientRequest[] = [];
  const fail = (message: string) => {
    if (failures.length < 5) failures.push(message);
  };

  /** Opens one stream; resolves once its 200 arrives, then parses frames until it ends. */
  const open = (token: string, kind: ClientKind) =>
    new Promise<void>((resolve, reject) => {
      const query = kind === 'agent' ? '?for=me' : '';
      const request = http.get(`${plan.url}/api/v1/events/stream${query}`, { agent: false, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } }, (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(new Error(`stream answered ${response.statusCode}`));
          return;
        }
        resolve();
        if (kind === 'slow') {
          const opened = Date.now();
          response.pause();
          response.on('close', () => {
            if (!closing) slowDropped.push((Date.now() - opened) / 1000);
          });
          return;
        }
        response.setEncoding('utf8');
        let buffer = '';
        let frames = 0;
        const histogram = latency[kind];
        response.on('data', (chunk: string) => {
          const now = Date.now();
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            // Only `created_at` is read, without parsing the JSON: the client must stay cheaper than the server.
            const at = buffer.indexOf(CREATED_AT);
            if (at >= 0 && at < end) {
              const created = Date.parse(buffer.slice(at + CREATED_AT.length, buffer.indexOf('"', at + CREATED_AT.length)));
              if (created >= window.from && created < window.to) {
                const index = Math.min(BUCKETS - 1, Math.max(0, now - created));
                histogram[index] = (histogram[index] ?? 0) + 1;
                const subject = buffer.indexOf(SUBJECT);
                if (kind === 'agent' && subject >= 0 && subject < end) agentFrames.push([buffer.slice(subject + SUBJECT.length, buffer.indexOf('"', subject + SUBJECT.length)), now]);
              } else outside++;
            }
            frames++;
            buffer = buffer.slice(end + 2);
          }
        });
        response.on('close', () => {
          if (closing) return;
          ended++;
          fail(`${kind} stream ended ${Date.now() - window.from} ms into the window (${response.socket?.destroyed}) after ${frames} frames, last ${buffer.slice(0, 80)} ${response.errored?.message}`);
        });
      });
      request.on('error', (error) => {
        if (closing) return;
        reject(error);
        fail(`${kind} stream: ${error.message}`);
      });
      requests.push(request);
    });

  let next = 0;
  await Promise.all(
    Array.from({ length: plan.concurrency }, async () => {
      while (next < plan.streams.length) {
        const stream = plan.streams[next++];
        if (stream) await open(stream.token, stream.kind);
      }
    }),
  );
  process.send?.({ opened: plan.streams.length });

  process.on('message', (message: { window?: { from: number; to: number }; report?: true }) => {
    if (message.window) window = message.window;
    if (message.report) {
      closing = true;
      for (const request of requests) request.destroy();
      const histogram = (buckets: Uint32Array): Histogram => ({ buckets: Array.from(buckets), count: buckets.reduce((n, c) => n + c, 0) });
      const report: StreamsReport = { latency: { agent: histogram(latency.agent), human: histogram(latency.human) }, agentFrames, slowDropped, outside, ended, failures };
      process.send?.({ report }, () => process.exit(0));
    }
  });
}

process.once('message', (plan: StreamsPlan) => {
  run(plan).catch((error: unknown) => process.send?.({ error: (error as Error).stack ?? String(error) }, () => process.exit(1)));
});
