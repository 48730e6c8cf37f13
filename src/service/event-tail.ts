import type { EventTail } from '../operations/define-operation.ts';
import type { Database } from '../store/database.ts';
import { EVENTS_CHANNEL, type EventRow, listEvents } from '../store/events.ts';

/** Rows per read, when catching up and when the tail reads what was appended. */
const PAGE = 500;
/** Rows one follower may have queued; past it, it stops taking batches and reads the table itself. */
const QUEUE_LIMIT = 2000;
/** The table is re-read this often even without a NOTIFY, so a lost wake-up only delays. */
const POLL_MS = 2000;

export interface RunningTail extends EventTail {
  /**
   * Calls `listener` on every NOTIFY of an append, from any instance, while the returned switch is
   * on (the webhook worker's wake-up, on while a live webhook exists), and once each time the
   * LISTEN starts, since appends before it notified nobody here.
   */
  onAppend(listener: () => void): (wanted: boolean) => void;
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
  // Held while anyone needs wake-ups (a follower, or onAppend's wanted): every write anywhere
  // notifies a LISTENing instance, so an instance nobody follows does not LISTEN.
  let demand = 0;
  let listening: Promise<() => Promise<void>> | undefined;
  let poll: NodeJS.Timeout | undefined;
  let reading = false;
  let again = false;
  let closed = false;
  // Shaped events, per row and key; each entry goes with its row once no follower holds the batch.
  const shapes = new WeakMap<EventRow, Map<string, object>>();

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
  const notified = () => {
    for (const listener of listeners) listener();
    wake();
  };
  /** Counts one more need for wake-ups; resolves, with its release, once NOTIFYs arrive. */
  const acquire = async (): Promise<() => void> => {
    demand++;
    if (!listening) {
      const started = database.listen(EVENTS_CHANNEL, notified);
      listening = started;
      // Appends committed before the LISTEN took effect notified nobody here.
      started.then(notified, () => {
        if (listening === started) listening = undefined;
      });
      poll ??= setInterval(wake, POLL_MS);
    }
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      if (--demand > 0) return;
      clearInterval(poll);
      poll = undefined;
      const stopping = listening;
      listening = undefined;
      stopping?.then((stop) => stop()).catch(() => undefined);
    };
    try {
      await listening;
    } catch (error) {
      release();
      throw error;
    }
    return release;
  };

  async function* follow(afterSeq: string, signal: AbortSignal): AsyncIterable<readonly EventRow[]> {
    const release = await acquire();
    try {
      yield* followFrom(BigInt(afterSeq), signal);
    } finally {
      release();
    }
  }

  async function* followFrom(from: bigint, signal: AbortSignal): AsyncIterable<readonly EventRow[]> {
    let position = from;
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
      let wanted = false;
      let held: (() => void) | undefined;
      let acquiring = false;
      const settle = () => {
        if (wanted && !held && !acquiring && !closed) {
          acquiring = true;
          // A failure is reported, not retried here: the next want(true) tries again.
          acquire().then(
            (release) => {
              acquiring = false;
              held = release;
              settle();
            },
            (error: unknown) => {
              acquiring = false;
              onError(error);
            },
          );
        } else if (!wanted && held) {
          held();
          held = undefined;
        }
      };
      return (next) => {
        wanted = next;
        settle();
      };
    },
    shared<T extends object>(row: EventRow, key: string, make: () => T): T {
      let byKey = shapes.get(row);
      if (!byKey) shapes.set(row, (byKey = new Map<string, object>()));
      let made = byKey.get(key);
      if (!made) byKey.set(key, (made = Object.freeze(make())));
      return made as T;
    },
    async close() {
      closed = true;
      clearInterval(poll);
      for (const follower of live) follower.wake?.();
      const stopping = listening;
      listening = undefined;
      await stopping?.then((stop) => stop()).catch(() => undefined);
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

/**
 * The timeline as one workspace sees it: the instance's one tail, keeping only that workspace's
 * events. Streams and long-polls follow this, never the whole tail.
 */
export function workspaceTail(tail: EventTail, workspaceId: string): EventTail {
  return {
    shared: (row, key, make) => tail.shared(row, key, make),
    async *follow(afterSeq, signal) {
      for await (const batch of tail.follow(afterSeq, signal)) {
        const mine = batch.filter((row) => row.workspace_id === workspaceId);
        if (mine.length > 0) yield mine;
      }
    },
  };
}
