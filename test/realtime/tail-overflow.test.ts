import { sql } from 'kysely';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createIds } from '../../src/ids.ts';
import { startEventTail } from '../../src/service/event-tail.ts';
import type { Database } from '../../src/store/database.ts';
import { appendEvents, type EventRow, latestSeq, type NewEventRow } from '../../src/store/events.ts';
import { DEFAULT_WORKSPACE_ID } from '../../src/store/workspace-scope.ts';
import { freshDatabase } from '../harness.ts';

/**
 * Issue 44 §2: a follower that stops taking batches falls out of the tail once it would hold more
 * than 2,000 rows, and reads the rest from the table at its own pace: it still gets every row of its
 * workspace once, in order, and none of another workspace's.
 */

let database: Database;
const ids = createIds();
beforeAll(async () => {
  database = (await freshDatabase()).database;
});
afterAll(() => database.close());

const event = (i: number): NewEventRow => ({
  id: ids.make('evt'), type: 'task.created', subject: `tsk_${i}`, actor_id: 'system', actor_kind: 'system', token_id: null, machine: null, idempotency_key: null, data: {}, created_at: new Date(),
});

async function append(workspaceId: string, rows: readonly NewEventRow[]): Promise<void> {
  await database.db.transaction().execute(async (tx) => {
    await sql`SELECT set_config('baton.workspace', ${workspaceId}, true)`.execute(tx);
    await appendEvents(tx, rows);
  });
}

it('gives a follower that stopped taking batches every row of its workspace once, in order, past its queue limit', async () => {
  const tail = startEventTail(database, (error) => {
    throw error;
  });
  const stop = new AbortController();
  const everyone: EventRow[] = [];
  let following: Promise<void> | undefined;
  try {
    const start = await latestSeq(database.db);
    const mine = tail.inWorkspace(DEFAULT_WORKSPACE_ID).follow(start, stop.signal)[Symbol.asyncIterator]();
    const prime = event(0);
    const primed = mine.next();
    await append(DEFAULT_WORKSPACE_ID, [prime]);
    const taken = await primed;
    expect(taken.done ? [] : taken.value.map((row) => row.id)).toEqual([prime.id]);
    // Asked once more, it reads the table (nothing new) and joins the tail; then it is left alone while
    // 3,000 of its rows arrive, which the tail cannot queue. The wait is only for it to join (one read).
    const first = mine.next();
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A follower of every workspace that takes each batch: once it has every row, the tail has offered them all.
    following = (async () => {
      for await (const batch of tail.follow(start, stop.signal)) everyone.push(...batch);
    })();
    const appended: string[] = [];
    for (let round = 0; round < 6; round++) {
      const rows = Array.from({ length: 500 }, (_, i) => event(round * 500 + i));
      await append(DEFAULT_WORKSPACE_ID, rows);
      appended.push(...rows.map((row) => row.id));
      await append('wsp_other', [event(-1)]);
    }
    await expect.poll(() => everyone.length, { timeout: 20_000 }).toBe(3007);

    const got: EventRow[] = [];
    for (let next = await first; !next.done; next = await mine.next()) {
      got.push(...next.value);
      if (got.length >= appended.length) break;
    }
    expect(got.map((row) => row.id)).toEqual(appended);
    expect(got.every((row) => row.workspace_id === DEFAULT_WORKSPACE_ID)).toBe(true);
    await mine.return?.();
  } finally {
    stop.abort();
    await following;
    await tail.close();
  }
});
