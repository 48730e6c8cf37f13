import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { createServer as createNetServer } from 'node:net';
import { fileURLToPath } from 'node:url';

/** The real `baton` binary (package.json "bin"), run by this Node. */
export const BATON = fileURLToPath(new URL('../../src/cli/baton.ts', import.meta.url));

export interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The environment a child gets: this one's PATH and nothing of Baton's, plus `env`. */
export function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env };
}

export interface Started {
  readonly child: ChildProcess;
  readonly outcome: Promise<Outcome>;
  /** What it has printed on stdout so far. */
  output(): string;
  /** Resolves with stdout once it matches `pattern` (rejects if the process ends first). */
  printed(pattern: RegExp): Promise<RegExpMatchArray>;
}

/** Starts `node …args` without waiting for it, collecting what it prints; `stdin: 'pipe'` leaves its input open for the test to write. */
export function startNode(args: readonly string[], env: Record<string, string>, stdin: 'ignore' | 'pipe' = 'ignore'): Started {
  const child = spawn(process.execPath, args, { env: childEnv(env), stdio: [stdin, 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const outcome = once(child, 'close').then(([code]) => ({ code: code as number | null, stdout, stderr }));
  const printed = (pattern: RegExp) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = stdout.match(pattern);
        if (!match) return false;
        child.stdout?.off('data', check);
        resolve(match);
        return true;
      };
      if (check()) return;
      child.stdout?.on('data', check);
      void outcome.then((o) => reject(new Error(`exited ${o.code} before printing ${pattern}:\n${o.stdout}\n${o.stderr}`)));
    });
  return { child, outcome, output: () => stdout, printed };
}

/** Starts `baton …args` without waiting for it. */
export function startBaton(args: readonly string[], env: Record<string, string>, stdin: 'ignore' | 'pipe' = 'ignore'): Started {
  return startNode([BATON, ...args], env, stdin);
}

/** Runs `node …args` to its exit. */
export function runNode(args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  return startNode(args, env).outcome;
}

/** Runs `baton …args` to its exit. */
export function runBaton(args: readonly string[], env: Record<string, string> = {}): Promise<Outcome> {
  return runNode([BATON, ...args], env);
}

/** A loopback port free at the moment of asking, for a `baton serve` the test starts. */
export async function freePort(): Promise<number> {
  const probe = createNetServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const { port } = probe.address() as { port: number };
  probe.close();
  await once(probe, 'close');
  return port;
}

/**
 * The bootstrap admin token a first `baton serve` made: its output is not a terminal, so it names
 * the file (mode 0600) it wrote the token to instead of printing it.
 */
export async function bootstrapToken(server: Started): Promise<string> {
  const [, file = ''] = await server.printed(/Bootstrap admin token written to (\S+) /);
  return (await readFile(file, 'utf8')).trim();
}
