/**
 * What bench/streams.ts reads of the Baton server it runs in a child process: its RSS from /proc,
 * and, through its inspector, its memory after a full garbage collection, its event-loop delay and
 * its garbage-collection pauses.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** The event-loop delay and garbage-collection pauses `watchLoop` measured, in ms. */
export interface LoopReport {
  delayP50Ms: number;
  delayP99Ms: number;
  delayMaxMs: number;
  gcCount: number;
  gcTotalMs: number;
  gcMaxMs: number;
}

/**
 * The server's inspector, opened with SIGUSR1 (Node's documented way to start it in a running
 * process, on 127.0.0.1:9229), to read its memory after a full garbage collection, so the
 * garbage of 10,000 connections being opened is not counted as the streams' memory.
 */
export class Inspector {
  #socket: WebSocket;
  #pid: number;
  #next = 1;

  private constructor(socket: WebSocket, pid: number) {
    this.#socket = socket;
    this.#pid = pid;
  }

  static async attach(pid: number): Promise<Inspector> {
    process.kill(pid, 'SIGUSR1');
    let url: string | undefined;
    for (let tries = 0; url === undefined && tries < 50; tries++) {
      await sleep(100);
      url = await fetch('http://127.0.0.1:9229/json/list')
        .then((response) => response.json() as Promise<{ webSocketDebuggerUrl: string }[]>)
        .then((targets) => targets[0]?.webSocketDebuggerUrl)
        .catch(() => undefined);
    }
    if (url === undefined) throw new Error('the server did not open its inspector on 127.0.0.1:9229');
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.addEventListener('open', resolve, { once: true });
      socket.addEventListener('error', reject, { once: true });
    });
    return new Inspector(socket, pid);
  }

  /** Collects garbage, then reads the process's RSS, V8's heap (used and committed) and external memory (KiB), and its open TCP sockets. */
  async settled(): Promise<{ rssKiB: number; mallocHeapKiB: number; heapKiB: number; heapTotalKiB: number; externalKiB: number; sockets: number }> {
    await this.#call('HeapProfiler.collectGarbage', {});
    const usage = JSON.parse(await this.#evaluate('JSON.stringify(process.memoryUsage())')) as { heapUsed: number; heapTotal: number; external: number };
    return { rssKiB: (await rssKiB(this.#pid)) ?? 0, mallocHeapKiB: await mallocHeapKiB(this.#pid), heapKiB: usage.heapUsed / 1024, heapTotalKiB: usage.heapTotal / 1024, externalKiB: usage.external / 1024, sockets: await this.#sockets() };
  }

  /**
   * Writes a heap snapshot (after a full garbage collection) to `path`, for diffing what a set of
   * streams holds (DevTools' Memory tab opens it, or compare the object ids of two).
   */
  async heapSnapshot(path: string): Promise<void> {
    await this.#call('HeapProfiler.collectGarbage', {});
    const chunks: string[] = [];
    const onChunk = (event: MessageEvent) => {
      const message = JSON.parse(String(event.data)) as { method?: string; params?: { chunk: string } };
      if (message.method === 'HeapProfiler.addHeapSnapshotChunk' && message.params) chunks.push(message.params.chunk);
    };
    this.#socket.addEventListener('message', onChunk);
    try {
      await this.#call('HeapProfiler.takeHeapSnapshot', { reportProgress: false });
    } finally {
      this.#socket.removeEventListener('message', onChunk);
    }
    await writeFile(path, chunks.join(''));
  }

  /** Resolves once the process holds at most `count` TCP sockets (its clients' closes have reached it). */
  async untilSockets(count: number): Promise<void> {
    while ((await this.#sockets()) > count) await sleep(200);
  }

  async #sockets(): Promise<number> {
    return Number(await this.#evaluate("String(process.getActiveResourcesInfo().filter((name) => name === 'TCPSocketWrap').length)"));
  }

  /** Starts measuring the server's event-loop delay and its garbage-collection pauses. */
  async watchLoop(): Promise<void> {
    await this.#evaluate(`(() => {
      const { monitorEventLoopDelay, PerformanceObserver } = process.getBuiltinModule('node:perf_hooks');
      const delay = monitorEventLoopDelay({ resolution: 10 });
      const gc = [];
      const observer = new PerformanceObserver((list) => gc.push(...list.getEntries().map((entry) => entry.duration)));
      observer.observe({ entryTypes: ['gc'] });
      delay.enable();
      globalThis.benchLoop = () => {
        delay.disable();
        observer.disconnect();
        const ms = (ns) => ns / 1e6;
        return JSON.stringify({ delayP50Ms: ms(delay.percentile(50)), delayP99Ms: ms(delay.percentile(99)), delayMaxMs: ms(delay.max), gcCount: gc.length, gcTotalMs: gc.reduce((a, b) => a + b, 0), gcMaxMs: Math.max(0, ...gc) });
      };
      return '';
    })()`);
  }

  async loopReport(): Promise<LoopReport> {
    return JSON.parse(await this.#evaluate('globalThis.benchLoop()')) as LoopReport;
  }

  close(): void {
    this.#socket.close();
  }

  async #evaluate(expression: string): Promise<string> {
    const answer = (await this.#call('Runtime.evaluate', { expression, returnByValue: true })) as { result: { value: string } };
    return answer.result.value;
  }

  #call(method: string, params: object): Promise<unknown> {
    const id = this.#next++;
    return new Promise((resolve) => {
      const onMessage = (event: MessageEvent) => {
        const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
        if (message.id !== id) return;
        this.#socket.removeEventListener('message', onMessage);
        resolve(message.result);
      };
      this.#socket.addEventListener('message', onMessage);
      this.#socket.send(JSON.stringify({ id, method, params }));
    });
  }
}

export async function rssKiB(pid: number, field = 'VmRSS'): Promise<number | undefined> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
  const kib = Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1]);
  return Number.isFinite(kib) ? kib : undefined;
}

/** The process's highest RSS so far (VmHWM). */
export function peakRssKiB(pid: number): Promise<number | undefined> {
  return rssKiB(pid, 'VmHWM');
}


/** The resident size of the process's `[heap]` mapping: glibc's main malloc arena (native objects, buffers), in KiB. */
export async function mallocHeapKiB(pid: number): Promise<number> {
  const smaps = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '');
  const entry = smaps.split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/).find((mapping) => mapping.split('\n', 1)[0]?.endsWith('[heap]'));
  return Number(/^Rss:\s+(\d+) kB/m.exec(entry ?? '')?.[1] ?? 0);
}
