import type { Clock } from '../clock.ts';
import { isDatabaseUnavailable } from '../errors.ts';

/** How often, at most, an outage of the database is logged again while it lasts. */
const OUTAGE_REPEAT_MS = 60_000;

export interface FailureLog {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

/** Reports one failure of background work, with what the work was (`{ pass: 'lease_expiry' }`). */
export type ReportFailure = (error: unknown, details: object, message: string) => void;

/**
 * Where the background work of an instance (maintenance passes, webhook delivery, the event tail,
 * PGlite's statistics) reports its failures. Each is logged at `error` with its stack, except while
 * the database is unavailable (refused, lost, timed out: `isDatabaseUnavailable`): then every loop
 * fails every pass, several lines a second with a stack each, so the outage is one `warn` when it
 * is first met and one a minute while it lasts (on `clock`), naming the work that failed, the
 * error's message and code, and how many failures went unlogged since the last line.
 */
export function backgroundFailures(log: FailureLog, clock: Clock): ReportFailure {
  let lastLogged: number | undefined;
  let unlogged = 0;
  return (error, details, message) => {
    if (!isDatabaseUnavailable(error)) {
      log.error({ err: error, ...details }, message);
      return;
    }
    const now = clock.now().getTime();
    if (lastLogged !== undefined && now - lastLogged < OUTAGE_REPEAT_MS) {
      unlogged++;
      return;
    }
    const { message: reason, code } = error as Error & { code?: unknown };
    log.warn(
      { ...details, error: reason, ...(typeof code === 'string' ? { code } : {}), failures_since_last: unlogged },
      `${message}: the database is unavailable; background work retries on its own and logs this at most once a minute while it lasts`,
    );
    lastLogged = now;
    unlogged = 0;
  };
}
