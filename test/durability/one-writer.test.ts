import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runBaton } from '../cli/run-baton.ts';
import { engine } from '../harness.ts';

/*
 * One process writes a PGlite data directory: a second one would see only its own writes and lose
 * one side's acknowledged writes on restart. It refuses to start instead. The lock is the kernel's,
 * dropped when its holder dies: what a killed holder left in the lock file never blocks a start,
 * even when its pid runs again (a container restarted after a crash), and of processes starting
 * together exactly one holds it.
 */

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const run = promisify(execFile);
const children: ChildProcess[] = [];
let dataDir: string;

function env(): NodeJS.ProcessEnv {
  return { PORT: '0', HOST: '127.0.0.1', BATON_DATA_DIR: dataDir, BATON_LOG_LEVEL: 'warn', BATON_SWEEP_INTERVAL_MS: '0', PATH: process.env.PATH };
}

/** Spawns `node src/main.ts` as an operator would and resolves once it says it is serving. */
function serve(): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['src/main.ts'], { cwd: REPO, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const heard = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Baton is serving')) resolve(child);
    };
    child.stdout.on('data', heard);
    child.stderr.on('data', heard);
    child.once('exit', (code, signal) => reject(new Error(`Baton exited (${code ?? signal}) before serving:\n${output}`)));
  });
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve())));
}

async function lockHolder(dir = dataDir): Promise<{ pid: number; hostname: string; startedAt: string } | undefined> {
  const text = await readFile(join(dir, 'baton.lock'), 'utf8');
  return text ? (JSON.parse(text) as { pid: number; hostname: string; startedAt: string }) : undefined;
}

/** What a holder that died without releasing leaves in the lock file: its pid, host and start time. */
function leftBy(pid: number): string {
  return `${JSON.stringify({ pid, hostname: hostname(), startedAt: '2026-01-01T00:00:00.000Z' })}\n`;
}

interface Contender {
  readonly child: ChildProcess;
  /** `held`, or `refused: <message>`, once told to try. */
  readonly verdict: Promise<string>;
}

/** Starts test/durability/lock-contender.ts on `dir`; resolves once it is loaded and waits to try. */
function contender(dir: string): Promise<Contender> {
  const child = spawn(process.execPath, ['test/durability/lock-contender.ts', dir], { cwd: REPO, stdio: ['pipe', 'pipe', 'inherit'] });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    let verdict: (line: string) => void = () => undefined;
    const told = new Promise<string>((settle) => (verdict = settle));
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const lines = output.split('\n');
      if (lines[0] === 'ready' && lines.length > 1) resolve({ child, verdict: told });
      if (lines.length > 2) verdict(lines[1] ?? '');
    });
    child.once('exit', (code, signal) => reject(new Error(`the contender exited (${code ?? signal}):\n${output}`)));
  });
}

describe.skipIf(engine !== 'pglite')('one writer per PGlite data directory (pglite only: PostgreSQL serves any number of instances)', () => {
  beforeAll(async () => {
    // A directory of its own around it: a first start leaves the bootstrap token file beside it.
    dataDir = join(await mkdtemp(join(tmpdir(), 'baton-one-writer-')), 'data');
    // A migrated database: creating one costs PGlite seconds, and the last test here covers that start.
    const restored = await runBaton(['restore', inject('pgliteDump')], { BATON_DATA_DIR: dataDir });
    expect(restored.code, restored.stderr).toBe(0);
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await rm(dirname(dataDir), { recursive: true, force: true });
  });

  it('refuses a second process with one line naming the directory and the holder; takes over the lock a killed process left', { timeout: 180_000 }, async () => {
    const first = await serve();
    expect(await lockHolder()).toMatchObject({ pid: first.pid, hostname: hostname() });

    const second = await run(process.execPath, ['src/main.ts'], { cwd: REPO, env: env(), timeout: 60_000 }).then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(second?.code).toBe(1);
    expect(second?.stdout).not.toContain('Baton is serving');
    const lines = second?.stderr.trim().split('\n') ?? [];
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(`PGlite data directory ${dataDir} is in use by process ${first.pid}`);
    expect(lines[0]).not.toMatch(/\n\s+at /);

    // A killed process leaves its record in the lock file, but the kernel dropped its lock.
    first.kill('SIGKILL');
    await exited(first);
    expect((await lockHolder())?.pid).toBe(first.pid);

    const third = await serve();
    expect(await lockHolder()).toMatchObject({ pid: third.pid });
    third.kill('SIGTERM');
    await exited(third);
    expect(third.exitCode).toBe(0);
    // A clean exit clears the record, so nothing names a process that no longer holds the directory.
    expect(await lockHolder()).toBeUndefined();
  });

  it('starts when the lock file names a dead holder whose pid now runs again (here: this test\'s own process)', { timeout: 180_000 }, async () => {
    await writeFile(join(dataDir, 'baton.lock'), leftBy(process.pid));
    const server = await serve();
    expect(await lockHolder()).toMatchObject({ pid: server.pid });
    server.kill('SIGTERM');
    await exited(server);
    expect(server.exitCode).toBe(0);
  });

  it('of 4 processes starting together on a directory whose lock file names a dead holder, exactly one holds it, in each of 8 rounds', { timeout: 300_000 }, async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-lock-race-'));
    const dead = spawn('true');
    await once(dead, 'exit');
    const holders: number[] = [];
    // Eight rounds: the pid-file lock this replaced gave two or three holders in half the rounds,
    // so eight catch its return all but once in 256 runs, at two fifths of twenty rounds' time.
    for (let round = 0; round < 8; round++) {
      await writeFile(join(dir, 'baton.lock'), leftBy(dead.pid ?? 0));
      const contenders = await Promise.all([1, 2, 3, 4].map(() => contender(dir)));
      // All four are loaded: told at once, they try within the same moment.
      for (const { child } of contenders) child.stdin?.write('go\n');
      const verdicts = await Promise.all(contenders.map((c) => c.verdict));
      holders.push(verdicts.filter((v) => v === 'held').length);
      for (const refusal of verdicts.filter((v) => v !== 'held')) expect(refusal).toContain(`refused: The PGlite data directory ${dir} is in use by `);
      for (const { child } of contenders) child.stdin?.end();
      await Promise.all(contenders.map(({ child }) => exited(child)));
    }
    expect(holders).toEqual(Array.from({ length: 8 }, () => 1));
    await rm(dir, { recursive: true, force: true });
  });

  it('stopped while creating its database, it still hands out the bootstrap token once, exits 0 and releases the lock', { timeout: 180_000 }, async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'baton-stopped-early-'));
    const child = spawn(process.execPath, ['src/main.ts'], { cwd: REPO, env: { ...env(), BATON_DATA_DIR: join(fresh, 'data') }, stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      // The first line comes before the database exists: a supervisor stopping Baton now must not kill it mid-start.
      if (output.includes('Creating the embedded database') && child.signalCode === null) child.kill('SIGTERM');
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    await exited(child);
    expect({ code: child.exitCode, signal: child.signalCode }).toEqual({ code: 0, signal: null });
    // Not a terminal: the token goes to a file beside the data directory, and only its path is printed.
    const file = /Bootstrap admin token written to (\S+) /.exec(output)?.[1] ?? '';
    expect(file).toBe(join(fresh, 'bootstrap-admin-token'));
    expect(await readFile(file, 'utf8')).toMatch(/^bat_\w+\n$/);
    expect(await lockHolder(join(fresh, 'data'))).toBeUndefined();
    await rm(fresh, { recursive: true, force: true });
  });
});
