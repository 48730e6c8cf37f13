import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';

/** Undo steps, run last-in first-out, each once: from `finally` and from a signal handler alike. */
export class Cleanup {
  #steps: (() => Promise<void>)[] = [];

  add(step: () => Promise<void>): void {
    this.#steps.push(step);
  }

  async run(): Promise<void> {
    for (let step = this.#steps.pop(); step; step = this.#steps.pop()) {
      await step().catch((error: unknown) => process.stderr.write(`cleanup step failed: ${String(error)}\n`));
    }
  }

  /** On Ctrl-C or SIGTERM: run the cleanup, then exit 130; `wasInterrupted()` turns true. */
  runOnSignals(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      interruptedBySignal = true;
      process.stderr.write(`\n${signal}: stopping servers and removing databases…\n`);
      void this.run().finally(() => process.exit(130));
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  }
}

let interruptedBySignal = false;

/** True once a signal stopped the run, so the failure it causes is not reported as the benchmark's. */
export function wasInterrupted(): boolean {
  return interruptedBySignal;
}

/**
 * For the baseline servers run as children: listen on a free loopback port, announce it, and
 * close (then `closeStore`) on SIGTERM, SIGINT or the parent closing our stdin.
 */
export async function serveUntilStopped(app: { listen(o: { port: number; host: string }): Promise<string>; close(): Promise<void> }, name: string, closeStore: () => Promise<void>): Promise<void> {
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  process.stdout.write(`${name} listening at ${address}\n`);
  let closing = false;
  const shutdown = () => {
    if (closing) return;
    closing = true;
    app
      .close()
      .then(closeStore)
      .then(
        () => process.exit(0),
        () => process.exit(1),
      );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdin.on('end', shutdown).resume();
}

/** A server in a child process, listening on 127.0.0.1 at `url`. */
export interface ServerProcess {
  readonly url: string;
  /** The last few kilobytes the child wrote, for error messages. */
  output(): string;
  readonly pid: number;
  /** SIGTERM, then SIGKILL if it has not exited within 15 s. Idempotent. */
  stop(): Promise<void>;
}

const OUTPUT_KEPT = 4096;
const START_TIMEOUT_MS = 60_000;

/**
 * Spawns `node <args>` with exactly `env` (plus PATH, and NODE_OPTIONS from BENCH_NODE_OPTIONS, e.g.
 * `--perf-basic-prof-only-functions` to read JS frames in `perf record`), waits for the first `http://…` address it
 * prints on stdout, then for `GET /readyz` to answer 200. The stop step is registered on `cleanup`
 * before anything can fail, so the child never outlives the run.
 */
export async function startServer(args: readonly string[], env: Record<string, string>, cleanup: Cleanup): Promise<ServerProcess> {
  const nodeOptions = process.env.BENCH_NODE_OPTIONS ? { NODE_OPTIONS: process.env.BENCH_NODE_OPTIONS } : {};
  const child = spawn(process.execPath, args, { env: { PATH: process.env.PATH ?? '', ...nodeOptions, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-OUTPUT_KEPT);
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = () => stopChild(child);
  cleanup.add(stop);

  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed within ${START_TIMEOUT_MS} ms`)), START_TIMEOUT_MS);
    const onData = () => {
      const match = /http:\/\/127\.0\.0\.1:\d+/.exec(output);
      if (!match) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      resolve(match[0]);
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with code ${code} before listening`));
    });
  }).catch((error: unknown) => {
    throw new Error(`node ${args.join(' ')}: ${(error as Error).message}\n${output}`);
  });
  await waitReady(`${url}/readyz`);
  return { url, pid: child.pid ?? 0, output: () => output, stop };
}

async function waitReady(url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const status = await fetch(url).then(
      (response) => response.status,
      () => 0,
    );
    if (status === 200) return;
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${START_TIMEOUT_MS} ms (last status ${status})`);
    await sleep(100);
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited;
  clearTimeout(timer);
}
