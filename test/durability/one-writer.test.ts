import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine } from '../harness.ts';

/*
 * One process writes a PGlite data directory: a second one would see only its own writes and lose
 * one side's acknowledged writes on restart. It refuses to start instead; a lock left by a killed
 * process is stale and taken over.
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

async function lockHolder(): Promise<{ pid: number; hostname: string; startedAt: string }> {
  return JSON.parse(await readFile(join(dataDir, 'baton.lock'), 'utf8')) as { pid: number; hostname: string; startedAt: string };
}

describe.skipIf(engine !== 'pglite')('one writer per PGlite data directory (pglite only: PostgreSQL serves any number of instances)', () => {
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'baton-one-writer-'));
  });

  afterAll(async () => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await Promise.all(children.map(exited));
    await rm(dataDir, { recursive: true, force: true });
  });

  it('refuses a second process with one line naming the directory and the holder; takes over the lock a killed process left', { timeout: 180_000 }, async () => {
    const first = await serve();
    expect(await lockHolder()).toMatchObject({ pid: first.pid });

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

    // A killed process leaves its lock behind; its pid is dead, so the lock is stale.
    first.kill('SIGKILL');
    await exited(first);
    expect((await lockHolder()).pid).toBe(first.pid);

    const third = await serve();
    expect(await lockHolder()).toMatchObject({ pid: third.pid });
    third.kill('SIGTERM');
    await exited(third);
    expect(third.exitCode).toBe(0);
    expect(await readdir(dataDir)).not.toContain('baton.lock');
  });

  it('stopped while creating its database, it still prints the bootstrap token once, exits 0 and releases the lock', { timeout: 180_000 }, async () => {
    const fresh = await mkdtemp(join(tmpdir(), 'baton-stopped-early-'));
    const child = spawn(process.execPath, ['src/main.ts'], { cwd: REPO, env: { ...env(), BATON_DATA_DIR: fresh }, stdio: ['ignore', 'pipe', 'pipe'] });
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
    expect(output).toMatch(/Bootstrap admin token \(shown once; store it now\):\n\n {2}\S+/);
    expect(await readdir(fresh)).not.toContain('baton.lock');
    await rm(fresh, { recursive: true, force: true });
  });
});
