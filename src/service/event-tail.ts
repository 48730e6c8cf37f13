import type { EventTail } from '../operations/define-operation.ts';
import type { Database } from '../store/database.ts';
import { EVENTS_CHANNEL, type EventRow, latestSeq, listEvents } from '../store/events.ts';

/** Rows per read, when catching up and when the tail reads what was appended. */
const PAGE = 500;
/** Rows one follower may have queued; past it, it stops taking batches and reads the table itself. */
const QUEUE_LIMIT = 2000;
/** The table is re-read this often even without a NOTIFY, so a lost wake-up only delays. */
const POLL_MS = 2000;

export interface RunningTail extends EventTail {
  /** Calls `listener` on every NOTIFY of an append, from any instance (the webhook worker's wake-up). */
  onAppend(listener: () => void): void;
  close(): Promise<void>;
}

interface Follower {
  /** The last seq queued for (or yielded to) this follower. */
  position: bigint;
  readonly queue: EventRow[][];
  size: number;
  overflowed: boolean;
  wake: (() => void) | undefined;
}

/**
 * One per instance. Correctness comes from the table, never from a notification: every follower
 * first reads the table by seq until it is level with the tail, then takes the batches the tail
 * reads once per wake-up (a NOTIFY from any instance, or the poll) and shares with all followers.
 * A follower that falls QUEUE_LIMIT rows behind goes back to reading the table at its own pace,
 * so memory stays bounded whatever the consumer does.
 */
export function startEventTail(database: Database, onError: (error: unknown) => void): RunningTail {
  const { db } = database;
  const live = new Set<Follower>();
  const listeners: (() => void)[] = [];
  let head = 0n;
  let started: Promise<void> | undefined;
  let stopListening: (() => Promise<void>) | undefined;
  let poll: NodeJS.Timeout | undefined;
  let reading = false;
  let again = false;
  let closed = false;

  const readAppended = async () => {
    // Nobody follows: nothing to read. A follower catches up from the table itself when it joins,
    // so the tail need only read past the furthest-behind follower.
    if (live.size === 0) return;
    const behind = [...live].map((f) => f.position).reduce((a, b) => (b < a ? b : a));
    if (behind > head) head = behind;
    for (;;) {
      const rows = await listEvents(db, { subject: undefined, types: undefined, afterSeq: String(head), beforeSeq: undefined, order: 'asc', limit: PAGE });
      const batch = rows.slice(0, PAGE);
      const last = batch.at(-1);
      if (!last) return;
      head = BigInt(last.seq);
      for (const follower of live) offer(follower, batch);
      if (rows.length <= PAGE) return;
    }
  };
  const wake = () => {
    if (closed) return;
    if (reading) {
      again = true;
      return;
    }
    reading = true;
    readAppended()
      .catch(onError)
      .finally(() => {
        reading = false;
        if (again) {
          again = false;
          wake();
        }
      });
  };
  const start = () =>
    (started ??= (async () => {
      head = BigInt(await latestSeq(db));
      stopListening = await database.listen(EVENTS_CHANNEL, () => {
        for (const listener of listeners) listener();
        wake();
      });
      poll = setInterval(wake, POLL_MS);
    })());

  async function* follow(afterSeq: string, signal: AbortSignal): AsyncIterable<readonly EventRow[]> {
    await start();
    let position = BigInt(afterSeq);
    while (!signal.aborted && !closed) {
      const rows = await listEvents(db, { subject: undefined, types: undefined, afterSeq: String(position), beforeSeq: undefined, order: 'asc', limit: PAGE });
      const batch = rows.slice(0, PAGE);
      const last = batch.at(-1);
      if (last) {
        position = BigInt(last.seq);
        yield batch;
        continue;
      }
      // Level with the table as of that read; go live only if the tail has not read past us since.
      if (position < head) continue;
      const follower: Follower = { position, queue: [], size: 0, overflowed: false, wake: undefined };
      live.add(follower);
      // An append that landed while nobody followed was not read: read now, so it is not left to the poll.
      wake();
      try {
        while (!signal.aborted && !closed) {
          const next = follower.queue.shift();
          if (next) {
            follower.size -= next.length;
            yield next;
          } else if (follower.overflowed) {
            break;
          } else {
            await nextWake(follower, signal);
          }
        }
      } finally {
        live.delete(follower);
      }
      position = follower.position;
    }
  }

  return {
    follow,
    onAppend(listener) {
      listeners.push(listener);
      start().catch(onError);
    },
    async close() {
      closed = true;
      clearInterval(poll);
      for (const follower of live) follower.wake?.();
      await started?.catch(() => undefined);
      await stopListening?.();
    },
  };
}

/** Queues the part of `batch` after the follower's position, unless that would pass its limit. */
function offer(follower: Follower, batch: readonly EventRow[]): void {
  if (follower.overflowed) return;
  const rows = batch.filter((row) => BigInt(row.seq) > follower.position);
  const last = rows.at(-1);
  if (!last) return;
  if (follower.size + rows.length > QUEUE_LIMIT) {
    follower.overflowed = true;
  } else {
    follower.queue.push(rows);
    follower.size += rows.length;
    follower.position = BigInt(last.seq);
  }
  follower.wake?.();
}

function nextWake(follower: Follower, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      follower.wake = undefined;
      signal.removeEventListener('abort', done);
      resolve();
    };
    follower.wake = done;
    signal.addEventListener('abort', done, { once: true });
  });
}
