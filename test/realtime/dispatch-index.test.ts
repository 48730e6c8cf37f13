import { afterAll, beforeAll, expect, it } from 'vitest';
import { eventKeys } from '../../src/domain/event-concerns.ts';
import { createIds } from '../../src/ids.ts';
import type { EventInterest } from '../../src/operations/define-operation.ts';
import { startEventTail } from '../../src/service/event-tail.ts';
import type { Database } from '../../src/store/database.ts';
import { appendEvents, type EventRow, latestSeq, type NewEventRow } from '../../src/store/events.ts';
import { freshDatabase } from '../harness.ts';

/**
 * Issue 44 §2: the tail routes an event only to the filtered followers indexed under an id it
 * names, and a key a follower gains while taking one row routes the next rows to it.
 * Unfiltered followers get it all.
 */

let database: Database;
const ids = createIds();
beforeAll(async () => {
  database = (await freshDatabase()).database;
});
afterAll(() => database.close());

const event = (subject: string, data: Record<string, unknown> = {}): NewEventRow => ({
  id: ids.make('evt'), type: 'comment.mentioned', subject, actor_id: 'system', actor_kind: 'system', token_id: null, machine: null, idempotency_key: null, data, created_at: new Date(),
});

it('gives an event only to the followers it names, and routes by a follower\'s new keys from the next row on', async () => {
  const tail = startEventTail(database, (error) => {
    throw error;
  });
  const stop = new AbortController();
  // Every follower is awaited before the tail and the database close, so none reads a closed pool.
  const following: Promise<void>[] = [];
  try {
    const start = await latestSeq(database.db);
    const got = new Map<string, EventRow[]>();
    const follow = (name: string, interest: EventInterest | undefined) => {
      got.set(name, []);
      following.push(
        (async () => {
          for await (const batch of tail.follow(start, stop.signal, interest)) got.get(name)?.push(...batch);
        })(),
      );
    };
    const agents = Array.from({ length: 20 }, (_, i) => `agt_${i}`);
    for (const agent of agents) {
      const keys = new Set([agent]);
      follow(agent, {
        keys,
        admit(row) {
          if (!eventKeys(row).some((key) => keys.has(key))) return false;
          // Taking a mention makes the task it names this follower's too.
          const task = (row.data as { task_id?: string }).task_id;
          if (task) keys.add(task);
          return true;
        },
      });
    }
    follow('human', undefined);
    const rows = [event('agt_7', { task_id: 'tsk_a' }), event('tsk_a'), event('tsk_b')];
    await database.db.transaction().execute((tx) => appendEvents(tx, rows));
    await expect.poll(() => got.get('human')?.length, { timeout: 20_000 }).toBe(3);
    await expect.poll(() => got.get('agt_7')?.length, { timeout: 20_000 }).toBe(2);
    expect(got.get('agt_7')?.map((r) => r.id)).toEqual([rows[0]?.id, rows[1]?.id]);
    expect(agents.filter((agent) => (got.get(agent)?.length ?? 0) > 0)).toEqual(['agt_7']);
  } finally {
    stop.abort();
    const ended = await Promise.allSettled(following);
    await tail.close();
    expect(ended.filter((e) => e.status === 'rejected')).toEqual([]);
  }
});
