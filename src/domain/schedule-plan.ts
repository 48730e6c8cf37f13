import { Cron } from 'croner';

/** What a schedule does with an occurrence while the task of the last one is still open. */
export const OVERLAPS = ['skip', 'coalesce', 'always'] as const;
export type Overlap = (typeof OVERLAPS)[number];

/** An occurrence handled more than this late was missed (downtime): only `catch_up` of those are created. */
export const MISSED_AFTER_MS = 10 * 60 * 1000;

/** The most occurrences one pass looks at for one schedule; older ones than these are skipped as missed. */
const SCAN_LIMIT = 1000;

/** The cron expression in its time zone; throws a readable `Error` for a bad expression or zone. */
export function cronOf(expression: string, timeZone: string): Cron {
  return new Cron(expression, { timezone: timeZone, paused: true, mode: '5-part' });
}

/** The next `count` occurrences strictly after `after`. */
export function nextRuns(expression: string, timeZone: string, after: Date, count: number): Date[] {
  return cronOf(expression, timeZone).nextRuns(count, after);
}

/** The first occurrence strictly after `after`, or null when there is none. */
export function nextRun(expression: string, timeZone: string, after: Date): Date | null {
  return cronOf(expression, timeZone).nextRun(after);
}

export interface Plan {
  /** Occurrences to create a task for, oldest first. */
  readonly create: readonly Date[];
  /** Occurrences skipped as missed (more than `MISSED_AFTER_MS` late, beyond `catch_up`). */
  readonly missed: number;
  /** The first occurrence after `now`: the schedule's next `next_run_at`. */
  readonly next: Date | null;
}

/**
 * Which due occurrences (from `first`, at or before `now`) get a task: those on time, and of the
 * missed ones (downtime) the most recent `catchUp`. Pure, so every instance plans the same.
 */
export function plan(schedule: { cron: string; time_zone: string; catch_up: number }, first: Date, now: Date): Plan {
  const cron = cronOf(schedule.cron, schedule.time_zone);
  const due: Date[] = [];
  for (let at: Date | null = first; at && at <= now && due.length < SCAN_LIMIT; at = cron.nextRun(at)) due.push(at);
  const next = cron.nextRun(now);
  const onTime = due.filter((at) => now.getTime() - at.getTime() <= MISSED_AFTER_MS);
  const missed = due.filter((at) => now.getTime() - at.getTime() > MISSED_AFTER_MS);
  const caughtUp = schedule.catch_up > 0 ? missed.slice(-schedule.catch_up) : [];
  return { create: [...caughtUp, ...onTime], missed: missed.length - caughtUp.length, next };
}
