import { eventKeys } from '../domain/event-concerns.ts';
import type { EventInterest } from '../operations/define-operation.ts';
import type { EventRow } from '../store/events.ts';
import { MultiMap } from '../multi-map.ts';

/** Rows one follower may have queued; past it, it stops taking batches and reads the table itself. */
const QUEUE_LIMIT = 2000;

export interface Follower {
  /**
   * The last seq offered to this follower, whether it took the row or not (another workspace's). A
   * filtered follower's stays where it joined until it overflows: it then takes the last seq the
   * tail dispatched to it.
   */
  position: bigint;
  readonly queue: EventRow[][];
  size: number;
  overflowed: boolean;
  wake: (() => void) | undefined;
  /** Only this workspace's events (undefined: every workspace's). */
  readonly workspaceId: string | undefined;
  /** A filtered follower's interest, and the keys the dispatch index holds it under. */
  readonly interest: EventInterest | undefined;
  indexed: readonly string[];
}

/** A follower that has just started: nothing queued, not yet live. */
export function newFollower(afterSeq: string, workspaceId: string | undefined, interest: EventInterest | undefined): Follower {
  return { position: BigInt(afterSeq), queue: [], size: 0, overflowed: false, wake: undefined, workspaceId, interest, indexed: [] };
}

const NONE: ReadonlySet<string> = new Set();

/**
 * The followers level with the tail, to whom it hands what it reads. Unfiltered followers take
 * every batch. Filtered ones (an agent's `for=me` stream) sit in a dispatch index by their
 * interest keys: each row read is routed, by the ids it names (`eventKeys`), to the followers
 * indexed under one of them, so an event wakes only the streams it may concern, however many are
 * open. A follower that would pass QUEUE_LIMIT rows queued overflows: it leaves the index and
 * reads the table at its own pace, so memory stays bounded whatever the consumer does.
 */
export class LiveFollowers {
  readonly #live = new Set<Follower>();
  readonly #unfiltered = new Set<Follower>();
  readonly #index = new MultiMap<string, Follower>();

  get size(): number {
    return this.#live.size;
  }

  /** The lowest position among them: the tail need read no further back. */
  furthestBehind(): bigint | undefined {
    let behind: bigint | undefined;
    for (const follower of this.#live) if (behind === undefined || follower.position < behind) behind = follower.position;
    return behind;
  }

  join(follower: Follower): void {
    this.#live.add(follower);
    if (follower.interest) this.#reindex(follower, follower.interest.keys);
    else this.#unfiltered.add(follower);
  }

  /** Stops offering `follower` anything: out of the live set and the dispatch index. */
  leave(follower: Follower): void {
    this.#live.delete(follower);
    this.#unfiltered.delete(follower);
    this.#reindex(follower, NONE);
  }

  wakeAll(): void {
    for (const follower of this.#live) follower.wake?.();
  }

  /** Hands `batch`, the rows the tail read after seq `before`, to every follower it may concern. */
  hand(batch: readonly EventRow[], before: bigint): void {
    for (const follower of this.#unfiltered) offer(follower, batch);
    this.#dispatch(batch, before);
  }

  /** Keeps the index level with what `follower`'s interest wants now (which rarely changes: checked first). */
  #reindex(follower: Follower, keys: ReadonlySet<string>): void {
    const was = follower.indexed;
    if (was.length === keys.size && was.every((key) => keys.has(key))) return;
    const had = new Set(was);
    for (const key of was) if (!keys.has(key)) this.#index.delete(key, follower);
    for (const key of keys) if (!had.has(key)) this.#index.add(key, follower);
    follower.indexed = [...keys];
  }

  /**
   * Routes each row of `batch` (read after seq `before`) to the filtered followers indexed under a
   * key it names, in order, asking each whether it takes the row; one that would pass its limit
   * overflows there and leaves the index, to read the table from the row before.
   */
  #dispatch(batch: readonly EventRow[], before: bigint): void {
    if (this.#index.size === 0) return;
    const taken = new Map<Follower, EventRow[]>();
    let previous = before;
    for (const row of batch) {
      const seq = BigInt(row.seq);
      const routed = new Set<Follower>();
      for (const key of eventKeys(row)) for (const follower of this.#index.get(key)) routed.add(follower);
      for (const follower of routed) {
        const interest = follower.interest;
        if (!interest || follower.overflowed || seq <= follower.position) continue;
        const rows = taken.get(follower) ?? [];
        taken.set(follower, rows);
        if (follower.size + rows.length >= QUEUE_LIMIT) {
          follower.overflowed = true;
          follower.position = previous > follower.position ? previous : follower.position;
          this.#reindex(follower, NONE);
          continue;
        }
        if (takes(follower, row)) rows.push(row);
        this.#reindex(follower, interest.keys);
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
  }
}

/** Queues the rows of `batch` after the follower's position that it takes, unless that would pass its limit. */
function offer(follower: Follower, batch: readonly EventRow[]): void {
  const last = batch.at(-1);
  if (follower.overflowed || !last || BigInt(last.seq) <= follower.position) return;
  const rows = batch.filter((row) => BigInt(row.seq) > follower.position && inScope(follower, row));
  if (follower.size + rows.length > QUEUE_LIMIT) {
    follower.overflowed = true;
    follower.wake?.();
    return;
  }
  follower.position = BigInt(last.seq);
  if (rows.length === 0) return;
  follower.queue.push(rows);
  follower.size += rows.length;
  follower.wake?.();
}

/** Whether `row` is of the follower's workspace. */
function inScope(follower: Follower, row: EventRow): boolean {
  return follower.workspaceId === undefined || row.workspace_id === follower.workspaceId;
}

/** Whether the follower takes `row` (asking a filtered one's interest, which counts as its one `admit`). */
export function takes(follower: Follower, row: EventRow): boolean {
  return inScope(follower, row) && (!follower.interest || follower.interest.admit(row));
}
