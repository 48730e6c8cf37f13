import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { StartupError } from '../startup-error.ts';

/** The lock file's name inside the PGlite data directory. */
export const LOCK_FILE = 'baton.lock';

interface Holder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

export interface DataDirLock {
  /** Removes the lock file if it is still this lock's; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Makes this process the only writer of a PGlite data directory: two processes on one directory
 * would each see only their own writes, and one side's acknowledged writes would be lost. Creates
 * `<dir>/baton.lock` holding this process's pid, host name and start time; the file appears
 * complete or not at all (written aside, then hard-linked into place, which fails if it exists).
 *
 * A lock whose process is gone (same host, pid not running) or whose file is unreadable is stale
 * and taken over. A lock from another host cannot be checked and is honoured. Throws a
 * `StartupError` naming the directory and the holding process otherwise.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const mine: Holder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
  const draft = `${path}.${process.pid}.tmp`;
  await writeFile(draft, `${JSON.stringify(mine)}\n`);
  try {
    // Two rounds: the first may find a stale lock and remove it.
    for (let round = 0; round < 2; round++) {
      if (await linked(draft, path)) return ownLock(path, mine);
      const holder = await readHolder(path);
      if (holder && isRunning(holder)) throw inUse(dir, holder);
      await unlink(path).catch(ignoreMissing);
    }
    throw inUse(dir, await readHolder(path));
  } finally {
    await unlink(draft).catch(ignoreMissing);
  }
}

function ownLock(path: string, mine: Holder): DataDirLock {
  return {
    async release() {
      const holder = await readHolder(path);
      if (holder?.pid === mine.pid && holder.startedAt === mine.startedAt) await unlink(path).catch(ignoreMissing);
    },
  };
}

async function linked(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

async function readHolder(path: string): Promise<Holder | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as Partial<Holder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.hostname !== 'string') return undefined;
    return { pid: parsed.pid, hostname: parsed.hostname, startedAt: String(parsed.startedAt) };
  } catch {
    return undefined;
  }
}

function isRunning(holder: Holder): boolean {
  if (holder.hostname !== hostname()) return true;
  try {
    // Signal 0 only checks: ESRCH means no such process, EPERM one owned by another user.
    process.kill(holder.pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function inUse(dir: string, holder: Holder | undefined): StartupError {
  const who = holder ? `process ${holder.pid} on ${holder.hostname} (since ${holder.startedAt})` : 'another process';
  return new StartupError(
    `The PGlite data directory ${dir} is in use by ${who}; one process may write it: stop that one, or give this one its own BATON_DATA_DIR, or use DATABASE_URL to run several instances.`,
  );
}

function ignoreMissing(error: unknown): void {
  if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
}
