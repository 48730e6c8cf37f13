import type { Kysely } from 'kysely';
import { latestSeq } from '../../store/events.ts';
import type { DB } from '../../store/schema.ts';
import type { OperationContext } from '../define-operation.ts';

/** The longest a read waits for something to happen: below every proxy's idle timeout we know of. */
export const LONG_POLL_MAX_S = 60;

/**
 * A bounded long-poll: `look` now (each look one short transaction of the caller's workspace), then again after each batch of events the timeline appends
 * (from any instance), until it answers or `waitS` seconds pass; then once more. The timeline's
 * position is read before the first check, so nothing committed between a check and the follow is
 * missed. Wall time bounds the wait (it is how long a connection stays open), not the server clock.
 */
export async function longPoll<T>(ctx: OperationContext, waitS: number, look: (db: Kysely<DB>) => Promise<T | undefined>): Promise<T | undefined> {
  const tail = ctx.tail;
  const check = () => ctx.inWorkspace(look);
  if (waitS <= 0 || !tail) return check();
  const from = await ctx.inWorkspace(latestSeq);
  const first = await check();
  if (first !== undefined) return first;
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(), Math.min(waitS, LONG_POLL_MAX_S) * 1000);
  try {
    for await (const batch of tail.follow(from, stop.signal)) {
      if (batch.length === 0) continue;
      const found = await check();
      if (found !== undefined) return found;
    }
    return await check();
  } finally {
    clearTimeout(timer);
    stop.abort();
  }
}
