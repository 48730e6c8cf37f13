import { eventKeys } from '../domain/event-concerns.ts';
import type { EventInterest, EventTail } from '../operations/define-operation.ts';
import type { Database } from '../store/database.ts';
import { EVENTS_CHANNEL, type EventRow, listEvents } from '../store/events.ts';

/** Rows per read, when catching up and when the tail reads what was appended. */
const PAGE = 500;
/** Rows one follower may have queued; past it, it stops taking batches and reads the table itself. */
const QUEUE_LIMIT = 2000;
/** The table is re-read this often even without a NOTIFY, so a lost wake-up only delays. */
const POLL_MS = 2000;
/**
 * Reads start at most this often. Under a steady stream of writes (a NOTIFY per commit), the events
 * of this long leave in one batch: one write to each stream's socket rather than one per event,
 * which is what 100 unfiltered streams at 200 events/s spend their time on. Costs at most this
 * much latency, and none to the first event after a quiet spell.
 */
const READ_EVERY_MS = 20;

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
  /**
   * The last seq queued for (or yielded to) this follower. A filtered follower's stays where it
   * joined until it overflows: it then takes the last seq the tail dispatched to it.
   */
  position: bigint;
  readonly queue: EventRow[][];
  size: number;
  overflowed: boolean;
  wake: (() => void) | undefined;
  /** A filtered follower's interest, and the keys the dispatch index holds it under. */
  readonly interest: EventInterest | undefined;
  readonly indexed: Set<string>;
}

/**
 * One per instance. Correctness comes from the table, never from a notification: every follower
 * first reads the table by seq until it is level with the tail, then takes the batches the tail
 * reads once per wake-up (a NOTIFY from any instance, or the poll) and shares with all followers.
 * A follower that falls QUEUE_LIMIT rows behind goes back to reading the table at its own pace,
 * so memory stays bounded whatever the consumer does.
 *
 * Unfiltered followers take every batch. Filtered ones (an agent's `for=me` stream) sit in a
 * dispatch index by their interest keys: each row read is routed, by the ids it names
 * (`eventKeys`), to the followers indexed under one of them, so an event wakes only the streams it
 * may concern, however many are open.
 */
export function startEventTail(database: Database, onError: (error: unknown) => void): RunningTail {
  const { db } = database;
  const live = new Set<Follower>();
  const unfiltered = new Set<Follower>();
  const index = new Map<string, Set<Follower>>();
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
  /** The read under way, which `close` waits for so none runs on a closed database. */
  let inFlight: Promise<void> | undefined;
  // When the last read started, and the read waiting for READ_EVERY_MS to pass since.
  let lastRead = -Infinity;
  let pending: NodeJS.Timeout | undefined;
  // Shaped events, per row and key; each entry goes with its row once no follower holds the batch.
  const shapes = new WeakMap<EventRow, Map<string, object>>();

  const readAppended = async () => {
    // Nobody follows: nothing to read. A follower catches up from the table itself when it joins,
    // so the tail need only read past the furthest-behind follower.
    if (live.size === 0) return;
    let behind: bigint | undefined;
    for (const follower of live) if (behind === undefined || follower.position < behind) behind = follower.position;
    if (behind !== undefined && behind > head) head = behind;
    for (;;) {
      const rows = await listEvents(database.tail, { subject: undefined, types: undefined, afterSeq: String(head), beforeSeq: undefined, order: 'asc', limit: PAGE });
      const batch = rows.slice(0, PAGE);
      const last = batch.at(-1);
      if (!last) return;
      const before = head;
      head = BigInt(last.seq);
      for (const follower of unfiltered) offer(follower, batch);
      dispatch(batch, before);
      if (rows.length <= PAGE) return;
    }
  };
  /** Keeps the index level with what `follower`'s interest wants now. */
  const reindex = (follower: Follower, keys: ReadonlySet<string>) => {
    for (const key of follower.indexed) {
      if (keys.has(key)) continue;
      follower.indexed.delete(key);
      const followers = index.get(key);
      followers?.delete(follower);
      if (followers?.size === 0) index.delete(key);
    }
    for (const key of keys) {
      if (follower.indexed.has(key)) continue;
      follower.indexed.add(key);
      let followers = index.get(key);
      if (!followers) index.set(key, (followers = new Set()));
      followers.add(follower);
    }
  };
  const none: ReadonlySet<string> = new Set();
  const nobody: ReadonlySet<Follower> = new Set();
  /**
   * Routes each row of `batch` (read after seq `before`) to the filtered followers indexed under a
   * key it names, in order, asking each whether it takes the row; one that would pass its limit
   * overflows there and leaves the index, to read the table from the row before.
   */
  const dispatch = (batch: readonly EventRow[], before: bigint) => {
    if (index.size === 0) return;
    const taken = new Map<Follower, EventRow[]>();
    let previous = before;
    for (const row of batch) {
      const seq = BigInt(row.seq);
      const routed = new Set<Follower>();
      for (const key of eventKeys(row)) for (const follower of index.get(key) ?? nobody) routed.add(follower);
      for (const follower of routed) {
        const interest = follower.interest;
        if (!interest || follower.overflowed || seq <= follower.position) continue;
        const rows = taken.get(follower) ?? [];
        taken.set(follower, rows);
        if (follower.size + rows.length >= QUEUE_LIMIT) {
          follower.overflowed = true;
          follower.position = previous > follower.position ? previous : follower.position;
          reindex(follower, none);
          continue;
        }
        if (interest.admit(row)) rows.push(row);
        reindex(follower, interest.keys);
      }
      previous = seq;
    }
    for (const [follower, rows] of taken) {
      if (rows.length > 0) {
        follower.queue.push(rows);
        follower.size += rows.length;
      }
      follower.wake?.();
    }
  };
  const wake = () => {
    if (closed || pending) return;
    if (reading) {
      again = true;
      return;
    }
    const wait = lastRead + READ_EVERY_MS - performance.now();
    if (wait > 0) {
      pending = setTimeout(() => {
        pending = undefined;
        wake();
      }, wait);
      return;
    }
    reading = true;
    lastRead = performance.now();
    inFlight = readAppended()
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

  async function* follow(afterSeq: string, signal: AbortSignal, interest?: EventInterest): AsyncIterable<readonly EventRow[]> {
    const release = await acquire();
    try {
      yield* followFrom(BigInt(afterSeq), signal, interest);
    } finally {
      release();
    }
  }

  async function* followFrom(from: bigint, signal: AbortSignal, interest: EventInterest | undefined): AsyncIterable<readonly EventRow[]> {
    let position = from;
    while (!signal.aborted && !closed) {
      const rows = await listEvents(db, { subject: undefined, types: undefined, afterSeq: String(position), beforeSeq: undefined, order: 'asc', limit: PAGE });
      const batch = rows.slice(0, PAGE);
      const last = batch.at(-1);
      if (last) {
        position = BigInt(last.seq);
        const taken = interest ? batch.filter((row) => interest.admit(row)) : batch;
        if (taken.length > 0) yield taken;
        continue;
      }
      // Level with the table as of that read; go live only if the tail has not read past us since.
      if (position < head) continue;
      const follower: Follower = { position, queue: [], size: 0, overflowed: false, wake: undefined, interest, indexed: new Set() };
      live.add(follower);
      if (interest) reindex(follower, interest.keys);
      else unfiltered.add(follower);
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
        unfiltered.delete(follower);
        reindex(follower, none);
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
      clearTimeout(pending);
      for (const follower of live) follower.wake?.();
      const stopping = listening;
      listening = undefined;
      await stopping?.then((stop) => stop()).catch(() => undefined);
      // Its failure, if any, went to onError.
      await inFlight?.catch(() => undefined);
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
    async *follow(afterSeq, signal, interest) {
      // Keys name principals and tasks, which belong to one workspace; the check keeps another's rows from `admit` all the same.
      const inWorkspace: EventInterest | undefined = interest && {
        get keys() {
          return interest.keys;
        },
        admit: (row) => row.workspace_id === workspaceId && interest.admit(row),
      };
      for await (const batch of tail.follow(afterSeq, signal, inWorkspace)) {
        const mine = batch.filter((row) => row.workspace_id === workspaceId);
        if (mine.length > 0) yield mine;
      }
    },
  };
}
