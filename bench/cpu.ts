import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';

/** Linux's USER_HZ: the unit of utime and stime in /proc/<pid>/stat on every common platform. */
const CLOCK_TICKS_PER_SECOND = 100;

/**
 * How often a watch reads its processes (and asks for the database's backends again). A pg pool
 * closes a connection idle for 10 s, and opens one when it needs it, so a database's backends
 * come and go within a measured window; a backend that exits is counted up to its last reading.
 */
const WATCH_INTERVAL_MS = 1_000;

/** CPU seconds (user + system) used so far by each process; undefined when any is unreadable (no /proc, or not on this host). */
export async function cpuSeconds(pids: readonly number[]): Promise<Map<number, number> | undefined> {
  const readings = await Promise.all(pids.map(async (pid) => [pid, await processCpuSeconds(pid)] as const));
  return readings.every(([, seconds]) => seconds !== undefined) ? new Map(readings as [number, number][]) : undefined;
}

/** One process's CPU seconds so far; undefined when it cannot be read (it exited, or there is no /proc). */
async function processCpuSeconds(pid: number): Promise<number | undefined> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields 14 and 15 (utime, stime), counted after the command name, which may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const seconds = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
  return stat && Number.isFinite(seconds) ? seconds : undefined;
}

/** CPU used over a measured window: every process watched, `own` (the server, or the benchmark process itself) alone. */
export interface CpuUsed {
  seconds: number;
  ownSeconds: number;
  /** Backends that exited during the window: each counted up to its last reading, at most WATCH_INTERVAL_MS before it exited. */
  exited: number;
  /** Of those, the ones that used CPU in the window before that reading (the others sat idle until their pool closed them). */
  exitedBusy: number;
}

export interface CpuWatch {
  /** Ends the window; undefined when `own` could not be read at its start or its end (no /proc, or not on this host). */
  stop(): Promise<CpuUsed | undefined>;
}

/**
 * Starts a measured window over `own` and the processes `backends` names (a database's backends):
 * reads them now, then every second, asking `backends` again each time, and once more at `stop`.
 * A backend first seen after the start counts from zero (its whole life is in the window); one
 * that exits counts up to its last reading and is reported in `exited`, so no backend that did
 * work is left out, nor does one that closed turn the whole reading unknown.
 */
export async function watchCpu(own: number, backends: () => Promise<number[]>): Promise<CpuWatch> {
  const first = new Map<number, number>();
  const last = new Map<number, number>();
  const exited = new Set<number>();
  const read = async (starting: boolean): Promise<void> => {
    const pids = new Set([own, ...(await backends()), ...last.keys()]);
    await Promise.all(
      [...pids].map(async (pid) => {
        if (exited.has(pid)) return;
        const seconds = await processCpuSeconds(pid);
        if (seconds === undefined) {
          // Never read: gone by the window's start (no work in it), or opened and closed between two readings (under a second).
          if (last.has(pid)) exited.add(pid);
          return;
        }
        if (!first.has(pid)) first.set(pid, starting ? seconds : 0);
        last.set(pid, seconds);
      }),
    );
  };
  await read(true);
  // Stopping cuts the wait short: the window ends when the caller says, not up to a second later.
  const stopping = new AbortController();
  // A failed reading (the admin connection refused, say) is thrown by `stop`, not left unhandled meanwhile.
  let failure: { error: unknown } | undefined;
  const watching = (async () => {
    while (!stopping.signal.aborted) {
      // Unref'd: a run that fails before `stop` must not be kept alive by its watch.
      await sleep(WATCH_INTERVAL_MS, undefined, { signal: stopping.signal, ref: false }).catch(() => undefined);
      if (!stopping.signal.aborted) await read(false);
    }
  })().catch((error: unknown) => {
    failure = { error };
  });
  return {
    async stop() {
      stopping.abort();
      await watching;
      if (failure) throw failure.error;
      await read(false);
      if (!first.has(own) || exited.has(own)) return undefined;
      let seconds = 0;
      for (const [pid, end] of last) seconds += end - (first.get(pid) ?? 0);
      const busy = [...exited].filter((pid) => (last.get(pid) ?? 0) > (first.get(pid) ?? 0)).length;
      return { seconds, ownSeconds: (last.get(own) ?? 0) - (first.get(own) ?? 0), exited: exited.size, exitedBusy: busy };
    },
  };
}

/** CPU per unit of work over a window: every process watched, and `own` alone. */
export interface CpuPerUnit {
  totalMs: number;
  ownMs: number;
  /** Backends that exited during the window, and those of them that had used CPU in it (see CpuUsed). */
  exited: number;
  exitedBusy: number;
}

export function cpuPerUnit(used: CpuUsed | undefined, units: number): CpuPerUnit | undefined {
  if (!used) return undefined;
  return { totalMs: (used.seconds * 1000) / units, ownMs: (used.ownSeconds * 1000) / units, exited: used.exited, exitedBusy: used.exitedBusy };
}

/** `, 1.23 CPU ms per request (server 0.60, database 0.63)` for a log line; the split only with `ownLabel`; '' without readings. */
export function cpuNote(cpu: CpuPerUnit | undefined, unit: string, ownLabel: string | undefined): string {
  if (!cpu) return '';
  const split = ownLabel ? ` (${ownLabel} ${cpu.ownMs.toFixed(2)}, database ${(cpu.totalMs - cpu.ownMs).toFixed(2)})` : '';
  return `, ${cpu.totalMs.toFixed(2)} CPU ms per ${unit}${split}${exitedNote(cpu)}`;
}

/** `; 2 backends exited in the window (1 idle throughout), …` when any did, else ''. */
export function exitedNote(cpu: CpuPerUnit | undefined): string {
  if (!cpu?.exited) return '';
  return `; ${exitedCount(cpu)} exited in the window, each counted to its last reading (at most ${WATCH_INTERVAL_MS / 1000} s before)`;
}

/** `2 backends (1 idle throughout)`: how many exited, and how many of them did no work in the window. */
export function exitedCount(cpu: CpuPerUnit): string {
  const idle = cpu.exited - cpu.exitedBusy;
  const which = idle === 0 ? '' : idle === 1 && cpu.exited === 1 ? ' (idle throughout)' : ` (${idle === cpu.exited ? 'all' : idle} idle throughout)`;
  return `${cpu.exited} backend${cpu.exited === 1 ? '' : 's'}${which}`;
}
