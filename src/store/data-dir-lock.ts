import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { tryLock } from 'fs-native-extensions';
import { StartupError } from '../startup-error.ts';

/** The lock file's name inside the PGlite data directory. */
export const LOCK_FILE = 'baton.lock';

interface Holder {
  readonly pid: number;
  readonly hostname: string;
  readonly startedAt: string;
}

export interface DataDirLock {
  /** Clears the holder recorded in the lock file and lets the lock go; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Makes this process the only writer of a PGlite data directory: two processes on one directory
 * would each see only their own writes, and one side's acknowledged writes would be lost.
 *
 * The lock is the kernel's: an exclusive lock on the open file `<dir>/baton.lock` (Linux: an open
 * file description lock; macOS: flock; Windows: LockFileEx), which the kernel drops when this
 * process ends, however it ends. So a lock is never stale, whatever pid a killed holder left in
 * the file or whoever runs under that pid now, and of any number of processes starting at once
 * exactly one gets it. The file itself stays; what it says (pid, host, start time of the holder)
 * is only for the refusal message. Throws a `StartupError` naming the directory and the holder
 * when another process holds the lock.
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = await open(join(dir, LOCK_FILE), constants.O_RDWR | constants.O_CREAT, 0o644);
  try {
    if (!tryLock(file.fd)) throw inUse(dir, parseHolder(await file.readFile('utf8').catch(() => '')));
    const mine: Holder = { pid: process.pid, hostname: hostname(), startedAt: new Date().toISOString() };
    await file.truncate(0);
    await file.write(`${JSON.stringify(mine)}\n`, 0);
  } catch (error) {
    await file.close();
    throw error;
  }
  let released = false;
  return {
    async release() {
      if (released) return;
      released = true;
      // Closing the file is what lets the lock go; clearing it first keeps the next refusal from naming this process.
      await file.truncate(0).finally(() => file.close());
    },
  };
}

/** The holder a lock file records; undefined when it is empty (released) or half-written. */
function parseHolder(text: string): Holder | undefined {
  try {
    const parsed = JSON.parse(text) as Partial<Holder>;
    if (typeof parsed.pid !== 'number' || typeof parsed.hostname !== 'string') return undefined;
    return { pid: parsed.pid, hostname: parsed.hostname, startedAt: String(parsed.startedAt) };
  } catch {
    return undefined;
  }
}

function inUse(dir: string, holder: Holder | undefined): StartupError {
  const who = holder ? `process ${holder.pid} on ${holder.hostname} (since ${holder.startedAt})` : 'another process';
  return new StartupError(
    `The PGlite data directory ${dir} is in use by ${who}; one process may write it: stop that one, or give this one its own BATON_DATA_DIR, or use DATABASE_URL to run several instances.`,
  );
}
