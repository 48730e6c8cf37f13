import { readFile } from 'node:fs/promises';

/** Linux's USER_HZ: the unit of utime and stime in /proc/<pid>/stat on every common platform. */
const CLOCK_TICKS_PER_SECOND = 100;

/** CPU seconds (user + system) used so far by each process; undefined when any is unreadable (no /proc, or not on this host). */
export async function cpuSeconds(pids: readonly number[]): Promise<Map<number, number> | undefined> {
  const readings = await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // Fields 14 and 15 (utime, stime), counted after the command name, which may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      return [pid, (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND] as const;
    }),
  );
  return readings.every(([, seconds]) => Number.isFinite(seconds)) ? new Map(readings) : undefined;
}

/** CPU seconds used between two readings; a process first seen in `after` counts from zero. */
export function cpuUsed(before: Map<number, number>, after: Map<number, number>): number {
  let used = 0;
  for (const [pid, seconds] of after) used += seconds - (before.get(pid) ?? 0);
  return used;
}

/** CPU per unit of work between two readings: every process read, and `own` (the server, or the benchmark process itself) alone. */
export interface CpuPerUnit {
  totalMs: number;
  ownMs: number;
}

export function cpuPerUnit(before: Map<number, number> | undefined, after: Map<number, number> | undefined, own: number, units: number): CpuPerUnit | undefined {
  if (!before || !after) return undefined;
  return { totalMs: (cpuUsed(before, after) * 1000) / units, ownMs: (((after.get(own) ?? 0) - (before.get(own) ?? 0)) * 1000) / units };
}

/** `, 1.23 CPU ms per request (server 0.60, database 0.63)` for a log line; the split only with `ownLabel`; '' without readings. */
export function cpuNote(cpu: CpuPerUnit | undefined, unit: string, ownLabel: string | undefined): string {
  if (!cpu) return '';
  const split = ownLabel ? ` (${ownLabel} ${cpu.ownMs.toFixed(2)}, database ${(cpu.totalMs - cpu.ownMs).toFixed(2)})` : '';
  return `, ${cpu.totalMs.toFixed(2)} CPU ms per ${unit}${split}`;
}
