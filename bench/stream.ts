/**
 * `npm run bench:stream`: events per second from commit to SSE clients, and p50/p99 delivery
 * latency, with 100 and 1,000 open streams, on PGlite and PostgreSQL (BENCH_DATABASE_URL).
 * One process holds the server and the clients, so client parsing competes with the server for CPU;
 * the figures are a floor. Latency runs from the moment the write is sent to the frame's arrival, so
 * it includes the write itself (the commit happens inside it; frames often arrive before its 201).
 */
import { randomBytes } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createServer } from '../src/server.ts';
import { type Database, openPglite, openPostgres } from '../src/store/database.ts';
import { ADMIN_URL } from './databases.ts';

const STREAMS = (process.env.BENCH_STREAMS ?? '100,1000').split(',').map(Number);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 500);
const WRITERS = 4;
const ENGINES = (process.env.BENCH_ENGINES ?? 'pglite,postgres').split(',');

interface Result {
  engine: string;
  streams: number;
  events: number;
  eventsPerS: number;
  deliveriesPerS: number;
  p50: number;
  p99: number;
}

async function openDatabase(engine: string): Promise<{ database: Database; drop: () => Promise<void> }> {
  if (engine === 'pglite') return { database: await openPglite({}), drop: async () => undefined };
  const name = `baton_bench_stream_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    database: openPostgres(url.toString(), 10),
    drop: async () => {
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    },
  };
}

/** Opens one stream and calls `onEvent(title, arrivalMs)` per frame; resolves once it is open. */
async function openStream(base: string, token: string, signal: AbortSignal, onEvent: (title: string, at: number) => void): Promise<void> {
  const res = await fetch(`${base}/api/v1/events/stream?types=task.created`, { headers: { authorization: `Bearer ${token}` }, signal });
  if (res.status !== 200 || !res.body) throw new Error(`stream answered ${res.status}`);
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  void (async () => {
    let buffer = '';
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true as const, value: undefined }));
      if (chunk.done) return;
      buffer += chunk.value;
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = frame.split('\n').find((line) => line.startsWith('data: '));
        if (data) onEvent((JSON.parse(data.slice(6)) as { data: { title: string } }).data.title, performance.now());
      }
    }
  })();
}

async function run(engine: string, streams: number): Promise<Result> {
  const { database, drop } = await openDatabase(engine);
  const server = await createServer(loadConfig({ BATON_RATE_LIMIT: '1000000000/60s', BATON_LOG_LEVEL: 'silent' }), { database });
  const base = await server.app.listen({ port: 0, host: '127.0.0.1' });
  const token = server.bootstrapToken ?? '';
  const stop = new AbortController();
  try {
    const sent = new Map<string, number>();
    const latencies: number[] = [];
    let received = 0;
    let allIn: () => void = () => undefined;
    const done = new Promise<void>((resolve) => (allIn = resolve));
    const onEvent = (title: string, at: number) => {
      latencies.push(at - (sent.get(title) ?? at));
      if (++received === streams * EVENTS) allIn();
    };
    for (let i = 0; i < streams; i += 50) {
      await Promise.all(Array.from({ length: Math.min(50, streams - i) }, () => openStream(base, token, stop.signal, onEvent)));
    }
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < EVENTS) {
          const title = `bench ${next++}`;
          sent.set(title, performance.now());
          const res = await fetch(`${base}/api/v1/tasks`, {
            method: 'POST',
            headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'idempotency-key': randomBytes(8).toString('hex') },
            body: JSON.stringify({ title }),
          });
          if (res.status !== 201) throw new Error(`write answered ${res.status}`);
          await res.body?.cancel();
        }
      }),
    );
    await done;
    const elapsedS = (performance.now() - started) / 1000;
    latencies.sort((a, b) => a - b);
    const pct = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0);
    return { engine, streams, events: EVENTS, eventsPerS: Math.round(EVENTS / elapsedS), deliveriesPerS: Math.round(received / elapsedS), p50: pct(0.5), p99: pct(0.99) };
  } finally {
    stop.abort();
    await server.close();
    await drop();
  }
}

const results: Result[] = [];
for (const engine of ENGINES) for (const streams of STREAMS) results.push(await run(engine, streams));
const table = [
  '| engine | open streams | events | events/s (write → every stream) | frames delivered/s | p50 ms | p99 ms |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...results.map((r) => `| ${r.engine} | ${r.streams} | ${r.events} | ${r.eventsPerS} | ${r.deliveriesPerS} | ${r.p50} | ${r.p99} |`),
].join('\n');
process.stdout.write(`${table}\n`);
if (process.env.BENCH_RECORD) {
  await appendFile(new URL('./RESULTS.md', import.meta.url), `\n## SSE stream (\`npm run bench:stream\`), ${new Date().toISOString()}\n\n${table}\n`);
}
process.exit(0);
