/** How many failures a task keeps, newest last: enough to tell a pattern, bounded. */
export const FAILURES_KEPT = 5;

export interface AttemptState {
  readonly attempts: number;
  /** The task's own limit, or null for the configured default. */
  readonly max_attempts: number | null;
}

export interface AttemptOutcome {
  /** The attempts counted, this one included. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** No attempt left: the task leaves the queue (blocked, `attempts_exhausted`). */
  readonly exhausted: boolean;
  /** When the task may be claimed again; null when exhausted. */
  readonly notBefore: Date | null;
}

/**
 * Counts one failed attempt (a lease that ended without a hand-in) and decides what follows:
 * back to the queue after the back-off for this many failures (the schedule's last entry
 * repeats), or out of it when no attempt is left.
 */
export function failAttempt(task: AttemptState, defaults: { maxAttempts: number; backoffS: readonly number[] }, now: Date): AttemptOutcome {
  const attempts = task.attempts + 1;
  const maxAttempts = task.max_attempts ?? defaults.maxAttempts;
  const exhausted = attempts >= maxAttempts;
  const waitS = defaults.backoffS[Math.min(attempts, defaults.backoffS.length) - 1] ?? 0;
  return { attempts, maxAttempts, exhausted, notBefore: exhausted ? null : new Date(now.getTime() + waitS * 1000) };
}
