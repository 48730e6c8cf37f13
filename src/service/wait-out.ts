import { setTimeout as sleep } from 'node:timers/promises';
import type { Clock } from '../clock.ts';
import { BatonError } from '../errors.ts';
import type { EventTail, WriteOperation } from '../operations/define-operation.ts';
import { LONG_POLL_MAX_S } from '../operations/shared/long-poll.ts';
import type { Kysely } from 'kysely';
import { latestSeq } from '../store/events.ts';
import type { DB } from '../store/schema.ts';
import type { z } from 'zod';

/** How often (wall time) a waiter looks at the clock for a holder's expiry, which no event announces. */
const RECHECK_MS = 1000;

/**
 * Runs a write that may wait out a refusal (`operation.waitsOut`): `attempt` now; refused with the
 * code it waits out, again after each batch of events the timeline appends and once `retryAt` of the
 * refusal has passed on `clock`, until it succeeds, fails otherwise, or the caller's seconds (wall
 * time, at most LONG_POLL_MAX_S) run out. The timeline's position is read before the first attempt,
 * so a release committed between an attempt and the follow is not missed.
 */
export async function waitingOut<T>(
  deps: { db: Kysely<DB>; clock: Clock; tail?: EventTail | undefined },
  operation: WriteOperation<z.ZodObject, z.ZodType>,
  input: z.output<z.ZodObject>,
  attempt: () => Promise<T>,
): Promise<T> {
  const wait = operation.waitsOut;
  const seconds = wait ? Math.min(wait.seconds(input), LONG_POLL_MAX_S) : 0;
  if (!wait || seconds <= 0 || !deps.tail) return attempt();
  const refused = (error: unknown): error is BatonError => error instanceof BatonError && error.code === wait.code;
  const deadline = Date.now() + seconds * 1000;
  const from = await latestSeq(deps.db);
  let last: BatonError;
  try {
    return await attempt();
  } catch (error) {
    if (!refused(error)) throw error;
    last = error;
  }
  const stop = new AbortController();
  const events = deps.tail.follow(from, stop.signal)[Symbol.asyncIterator]();
  try {
    let next = events.next();
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) throw last;
      const timer = new AbortController();
      const woke = await Promise.race([next, sleep(Math.min(left, RECHECK_MS), 'time' as const, { signal: timer.signal }).catch(() => 'time' as const)]);
      timer.abort();
      if (woke === 'time') {
        // Nothing happened: ask again only once the first holder's time is up on the server's clock, or at the end.
        const at = wait.retryAt(last);
        if (!(at !== undefined && at <= deps.clock.now()) && Date.now() < deadline) continue;
      } else {
        if (woke.done) throw last;
        next = events.next();
        if (woke.value.length === 0) continue;
      }
      try {
        return await attempt();
      } catch (error) {
        if (!refused(error)) throw error;
        last = error;
      }
    }
  } finally {
    stop.abort();
  }
}
