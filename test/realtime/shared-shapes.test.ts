import { afterAll, beforeAll, expect, it } from 'vitest';
import { startEventTail } from '../../src/service/event-tail.ts';
import type { Database } from '../../src/store/database.ts';
import { freshDatabase } from '../harness.ts';

/**
 * Issue 44 §2: an event is shaped once per view and shared by every stream that follows the tail,
 * not once per stream (the SSE adapter then serialises each shared item once). Two followers of one
 * tail get the very same object for the same event and view.
 */

let database: Database;
beforeAll(async () => {
  database = (await freshDatabase()).database;
});
afterAll(() => database.close());

it('shapes an event once per row and key, for every follower, and freezes what it shares', async () => {
  const tail = startEventTail(database, (error) => {
    throw error;
  });
  try {
    const row = { id: 'evt_1', seq: '1' } as unknown as Parameters<typeof tail.shared>[0];
    let made = 0;
    const make = () => ({ made: ++made });
    const first = tail.shared(row, 'compact', make);
    expect(tail.shared(row, 'compact', make)).toBe(first);
    expect(tail.shared(row, 'full', make)).not.toBe(first);
    expect(made).toBe(2);
    expect(Object.isFrozen(first)).toBe(true);
  } finally {
    await tail.close();
  }
});
