/**
 * `node bench/stream-floor.ts [--streams=10000]`
 *
 * Node's own floor under bench/streams.ts's memory figure: a bare `node:http` server (no Fastify,
 * no Baton, no database) that answers each GET with the head an events stream sends (the same
 * headers, not chunked, `retry:` written) and holds the response open. It runs in a child process;
 * this one opens `--streams` idle streams, 20 at a time, one socket each, as the streams bench's
 * clients do, then asks the server for its memory after garbage collection (waiting 5 s, so V8
 * gives back the pages the opening used): RSS, glibc's `[heap]` and the JS heap, per stream.
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { mallocHeapKiB, rssKiB } from './server-inspector.ts';

interface Memory {
  rssKiB: number;
  mallocHeapKiB: number;
  jsHeapKiB: number;
}

const { values } = parseArgs({ options: { streams: { type: 'string', default: '10000' }, serve: { type: 'boolean', default: false } } });
if (values.serve) serve();
else await measure(Number(values.streams));

function serve(): void {
  const held = new Set<http.ServerResponse>();
  const retry = Buffer.from('retry: 3000\n\n');
  const server = http.createServer((request, response) => {
    if (request.url === '/memory') {
      void settledMemory().then((memory) => response.end(JSON.stringify(memory)));
      return;
    }
    response.removeHeader('transfer-encoding');
    response.writeHead(200, {
      'x-request-id': crypto.randomUUID(),
      'ratelimit-policy': '"default";q=600;w=60',
      ratelimit: '"default";r=598;t=22',
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
      connection: 'close',
    });
    response.write(retry);
    held.add(response);
    response.on('close', () => held.delete(response));
  });
  server.listen(0, '127.0.0.1', () => process.send?.((server.address() as AddressInfo).port));
}

async function settledMemory(): Promise<Memory> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  await sleep(5000);
  gc?.();
  return {
    rssKiB: (await rssKiB(process.pid)) ?? 0,
    mallocHeapKiB: await mallocHeapKiB(process.pid),
    jsHeapKiB: process.memoryUsage().heapUsed / 1024,
  };
}

async function measure(streams: number): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], { execArgv: ['--expose-gc'] });
  const [port] = (await once(child, 'message')) as [number];
  const memory = () =>
    new Promise<Memory>((resolve, reject) =>
      http.get({ host: '127.0.0.1', port, path: '/memory', agent: false }, (response) => {
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => resolve(JSON.parse(body) as Memory));
        response.on('error', reject);
      }),
    );
  const open = () =>
    new Promise<void>((resolve, reject) => {
      const request = http.get({ host: '127.0.0.1', port, path: '/events/stream', agent: false, headers: { accept: 'text/event-stream', authorization: `Bearer baton_0_${'x'.repeat(40)}` } }, (response) => {
        response.once('data', () => resolve());
      });
      request.on('error', reject);
    });
  try {
    const before = await memory();
    for (let opened = 0; opened < streams; opened += 20) await Promise.all(Array.from({ length: Math.min(20, streams - opened) }, open));
    const idle = await memory();
    const per = (field: keyof Memory) => ((idle[field] - before[field]) / streams).toFixed(1);
    process.stdout.write(
      `${streams} idle streams on a bare node:http server (Node ${process.version}): RSS ${(before.rssKiB / 1024).toFixed(0)} → ${(idle.rssKiB / 1024).toFixed(0)} MiB, ` +
        `**${per('rssKiB')} KiB per idle stream**; of it glibc's \`[heap]\` ${per('mallocHeapKiB')} KiB and the JS heap ${per('jsHeapKiB')} KiB.\n`,
    );
  } finally {
    child.kill();
  }
  process.exit(0);
}
