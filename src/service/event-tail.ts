import type { EventTail } from '../operations/define-operation.ts';
import type { Database } from '../store/database.ts';
import { EVENTS_CHANNEL, type EventRow, listEvents } from '../store/events.ts';
import { type Follower, LiveFollowers, newFollower, takes } from './tail-followers.ts';

/** Rows per read, when catching up and when the tail reads what was appended. */
const PAGE = 500;
/** The table is re-read this often even without a NOTIFY, so a lost wake-up only delays. */
const POLL_MS = 2000;
/**
 * Reads start at most this often. Under a steady stream of writes (a NOTIFY per commit), the events
 * of this long leave in one batch: one write to each stream's socket rather than one per event,
 * which is what 100 unfiltered streams at 200 events/s spend their time on. Costs at most this
 * much latency, and none to the first event after a quiet spell.
 */
const READ_EVERY_MS = 20;

/** The instance's tail, which streams and long-polls follow only through `inWorkspace`. */
export interface InstanceTail extends EventTail {
  /** The timeline as one workspace sees it: the same tail, keeping only that workspace's events. */
  inWorkspace(workspaceId: string): EventTail;
}

export interface RunningTail extends InstanceTail {
  /**
   * Calls `listener` on every NOTIFY of an append, from any instance, while the returned switch is
   * on (the webhook worker's wake-up, on while a live webhook exists), and once each time the
   * LISTEN starts, since appends before it notified nobody here.
   */
  onAppend(listener: () => void): (wanted: boolean) => void;
  close(): Promise<void>;
}

/**
 * One per instance. Correctness comes from the table, never from a notification: every follower
 * first reads the table by seq until it is level with the tail, then takes the batches the tail
 * reads once per wake-up (a NOTIFY from any instance, or the poll) and hands to those it may
 * concern (`LiveFollowers`). A follower that falls too far behind goes back to reading the table at
 * its own pace, so memory stays bounded whatever the consumer does.
 */
export function startEventTail(database: Database, onError: (error: unknown) => void): RunningTail {
  const { db } = database;
  const live = new LiveFollowers();
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
    const behind = live.furthestBehind();
    if (behind !== undefined && behind > head) head = behind;
    for (;;) {
      const rows = await listEvents(database.tail, { subject: undefined, types: undefined, afterSeq: String(head), beforeSeq: undefined, order: 'asc', limit: PAGE });
      const batch = rows.slice(0, PAGE);
      const last = batch.at(-1);
      if (!last) return;
      const before = head;
      head = BigInt(last.seq);
      live.hand(batch, before);
      if (rows.length <= PAGE) return;
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

  const shared = <T extends object>(row: EventRow, key: string, make: () => T): T => {
    let byKey = shapes.get(row);
    if (!byKey) shapes.set(row, (byKey = new Map<string, object>()));
    let made = byKey.get(key);
    if (!made) byKey.set(key, (made = Object.freeze(make())));
    return made as T;
  };
  /**
   * Every event after `follower.position` that it takes, in batches: first read from the table until
   * level with the tail, then taken from the batches the tail shares, and back to the table after an
   * overflow. An open stream holds one of these while idle, so its size is what each of 10,000 idle
   * streams costs: one object with its methods on the prototype, waiting on one promise its
   * follower's `wake` settles, not a suspended async function and a closure per step.
   */
  class Following implements AsyncIterableIterator<readonly EventRow[]> {
    readonly #follower: Follower;
    readonly #signal: AbortSignal;
    #release: (() => void) | undefined;
    #joined = false;
    #ended = false;

    constructor(follower: Follower, signal: AbortSignal) {
      this.#follower = follower;
      this.#signal = signal;
    }

    [Symbol.asyncIterator](): this {
      return this;
    }

    next(): Promise<IteratorResult<readonly EventRow[]>> {
      return this.#idle() ? this.#waken() : this.#step();
    }

    return(): Promise<IteratorResult<readonly EventRow[]>> {
      this.#end();
      return Promise.resolve({ done: true, value: undefined });
    }

    /** The signal's `abort` listener (an EventListener object, so no closure per stream). */
    handleEvent(): void {
      this.#follower.wake?.();
    }

    #over(): boolean {
      return this.#ended || this.#signal.aborted || closed;
    }

    /** Live, with nothing queued: only the tail's next batch (or the end) can move it on. */
    #idle(): boolean {
      const follower = this.#follower;
      return this.#joined && !this.#over() && follower.queue.length === 0 && !follower.overflowed;
    }

    /** Settles once a wake-up brings something; a wake-up that brings nothing (a row it did not take) leaves it waiting. */
    #waken(): Promise<IteratorResult<readonly EventRow[]>> {
      const follower = this.#follower;
      return new Promise((resolve) => {
        follower.wake = () => {
          if (this.#idle()) return;
          follower.wake = undefined;
          resolve(this.#step());
        };
      });
    }

    // Idempotent: a second call (from a `next` that was waiting for `acquire` when `return` came) releases what the first could not.
    #end(): void {
      const follower = this.#follower;
      this.#ended = true;
      if (this.#joined) live.leave(follower);
      this.#joined = false;
      this.#signal.removeEventListener('abort', this);
      this.#release?.();
      follower.wake?.();
    }

    async #step(): Promise<IteratorResult<readonly EventRow[]>> {
      const follower = this.#follower;
      try {
        if (!this.#release && !this.#over()) {
          this.#release = await acquire();
          this.#signal.addEventListener('abort', this, { once: true });
        }
        while (!this.#over()) {
          // Behind what the tail has read: catch up from the table first. At or past it (a stream
          // starting now), the tail's read that joining wakes brings what follows, so none here.
          if (!this.#joined && follower.position < head) {
            const rows = await listEvents(db, { subject: undefined, types: undefined, afterSeq: String(follower.position), beforeSeq: undefined, order: 'asc', limit: PAGE });
            if (this.#over()) break;
            const batch = rows.slice(0, PAGE);
            const last = batch.at(-1);
            if (last) {
              follower.position = BigInt(last.seq);
              const taken = batch.filter((row) => takes(follower, row));
              if (taken.length > 0) return { done: false, value: taken };
            }
            // Read again, unless level with the table as of that read and the tail has not read past us since.
            if (last || follower.position < head) continue;
          }
          if (!this.#joined) {
            this.#joined = true;
            live.join(follower);
            // An append that landed while nobody followed was not read: read now, so it is not left to the poll.
            wake();
            continue;
          }
          const queued = follower.queue.shift();
          if (queued) {
            follower.size -= queued.length;
            return { done: false, value: queued };
          }
          if (follower.overflowed) {
            // Back to reading the table from the last row it was given.
            live.leave(follower);
            this.#joined = false;
            follower.overflowed = false;
            continue;
          }
          break;
        }
      } catch (error) {
        this.#end();
        throw error;
      }
      // Live and nothing queued: wait, with this function returned rather than suspended.
      if (this.#idle()) return this.#waken();
      this.#end();
      return { done: true, value: undefined };
    }
  }

  /** `follow` for the events of `workspaceId` (undefined: of every workspace). */
  const followIn =
    (workspaceId: string | undefined): EventTail['follow'] =>
    (afterSeq, signal, interest) =>
      new Following(newFollower(afterSeq, workspaceId, interest), signal);

  return {
    follow: followIn(undefined),
    inWorkspace: (workspaceId) => ({ follow: followIn(workspaceId), shared }),
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
    shared,
    async close() {
      closed = true;
      clearInterval(poll);
      clearTimeout(pending);
      live.wakeAll();
      const stopping = listening;
      listening = undefined;
      await stopping?.then((stop) => stop()).catch(() => undefined);
      // Its failure, if any, went to onError.
      await inFlight?.catch(() => undefined);
    },
  };
}
